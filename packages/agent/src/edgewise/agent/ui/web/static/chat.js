// The chat page of Edgewise's Agent.to_web(): plain JavaScript, no dependencies. It keeps the chat as the
// Vercel AI SDK's UI messages, sends them to /api/chat and reads the answer as a UI message stream
// (server-sent events of JSON chunks), asking the user for the tool approvals the agent needs.
'use strict';

const CHAT_ID = /^[A-Za-z0-9_.-]{1,100}$/;
const chat = { id: '', messages: [], busy: false, durable: false };
const $ = (id) => document.getElementById(id);

function newId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return 'c' + Date.now().toString(36) + Math.random().toString(36).slice(2, 10);
}

function setStatus(text, isError) {
  const status = $('status');
  status.textContent = text || '';
  status.className = isError ? 'error' : '';
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function pretty(value) {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function isTool(part) {
  return part.type === 'dynamic-tool' || part.type.startsWith('tool-');
}

function toolName(part) {
  return part.type === 'dynamic-tool' ? part.toolName : part.type.slice(5);
}

function render() {
  const log = $('log');
  log.replaceChildren();
  for (const message of chat.messages) {
    const box = element('div', 'msg ' + message.role);
    box.dataset.messageId = message.id;
    for (const part of message.parts) {
      if (part.type === 'text') box.append(element('div', 'text', part.text));
      else if (part.type === 'reasoning') box.append(element('div', 'reasoning', part.text));
      else if (part.type === 'file') box.append(element('div', 'file', '[file ' + part.mediaType + ']'));
      else if (isTool(part)) box.append(renderTool(message, part));
    }
    log.append(box);
  }
  log.scrollTop = log.scrollHeight;
}

function renderTool(message, part) {
  const box = element('div', 'tool ' + part.state);
  box.dataset.toolCallId = part.toolCallId;
  const head = element('div');
  head.append(element('span', 'name', toolName(part)), ' ', element('span', 'state', part.state));
  box.append(head, element('pre', 'input', pretty(part.input)));
  if (part.state === 'output-available') box.append(element('pre', 'output', pretty(part.output)));
  if (part.state === 'output-error') box.append(element('pre', 'output error', part.errorText));
  if (part.state === 'output-denied') {
    const reason = part.approval && part.approval.reason;
    box.append(element('pre', 'output', 'Denied' + (reason ? ': ' + reason : '')));
  }
  if (part.state === 'approval-requested' && !chat.busy) {
    const row = element('div', 'approval');
    const reason = element('input');
    reason.placeholder = 'Reason (for a denial)';
    reason.className = 'reason';
    const approve = element('button', 'approve', 'Approve');
    const deny = element('button', 'deny', 'Deny');
    approve.type = deny.type = 'button';
    approve.onclick = () => answer(message, part, true, '');
    deny.onclick = () => answer(message, part, false, reason.value.trim());
    row.append(approve, deny, reason);
    box.append(row);
  }
  return box;
}

function answer(message, part, approved, reason) {
  part.state = 'approval-responded';
  part.approval = { id: part.approval.id, approved: approved };
  if (reason) part.approval.reason = reason;
  const waiting = message.parts.some((p) => isTool(p) && p.state === 'approval-requested');
  render();
  if (!waiting) send();
}

// What is sent: the UI messages without this page's own bookkeeping (keys starting with `_`).
function wire(messages) {
  return JSON.parse(JSON.stringify(messages, (key, value) => (key.startsWith('_') ? undefined : value)));
}

function options() {
  const body = {};
  const model = $('model').value;
  if (model) body.model = model;
  body.builtinTools = [...document.querySelectorAll('#tools input:checked')].map((box) => box.value);
  return body;
}

async function send() {
  chat.busy = true;
  $('send').disabled = true;
  setStatus('Thinking…');
  const body = Object.assign({ trigger: 'submit-message', id: chat.id, messages: wire(chat.messages) }, options());
  try {
    const response = await fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      let text = await response.text();
      try { text = JSON.parse(text).error || text; } catch (e) { /* not JSON */ }
      setStatus(text, true);
      return;
    }
    const failed = await readStream(response);
    if (!failed) setStatus('');
  } catch (error) {
    setStatus(String(error), true);
  } finally {
    chat.busy = false;
    $('send').disabled = false;
    render();
  }
}

async function readStream(response) {
  let message = chat.messages[chat.messages.length - 1];
  if (!message || message.role !== 'assistant') {
    message = { id: newId(), role: 'assistant', parts: [] };
    chat.messages.push(message);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const stream = { message: message, parts: {}, failed: false };
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data && data !== '[DONE]') apply(stream, JSON.parse(data));
      }
    }
    render();
  }
  return stream.failed;
}

function toolPart(stream, id) {
  return stream.message.parts.find((p) => isTool(p) && p.toolCallId === id);
}

function apply(stream, chunk) {
  const parts = stream.message.parts;
  switch (chunk.type) {
    case 'start':
      if (chunk.messageId) stream.message.id = chunk.messageId;
      break;
    case 'start-step':
      parts.push({ type: 'step-start' });
      break;
    case 'text-start':
    case 'reasoning-start': {
      const part = { type: chunk.type === 'text-start' ? 'text' : 'reasoning', text: '', state: 'streaming' };
      if (chunk.providerMetadata) part.providerMetadata = chunk.providerMetadata;
      parts.push(part);
      stream.parts[chunk.id] = part;
      break;
    }
    case 'text-delta':
    case 'reasoning-delta':
      if (stream.parts[chunk.id]) stream.parts[chunk.id].text += chunk.delta;
      break;
    case 'text-end':
    case 'reasoning-end':
      if (stream.parts[chunk.id]) stream.parts[chunk.id].state = 'done';
      break;
    case 'tool-input-start': {
      let part = toolPart(stream, chunk.toolCallId);
      if (!part) {
        part = { type: 'tool-' + chunk.toolName, toolCallId: chunk.toolCallId, state: 'input-streaming', _args: '' };
        parts.push(part);
      }
      if (chunk.providerExecuted) part.providerExecuted = true;
      if (chunk.providerMetadata) part.callProviderMetadata = chunk.providerMetadata;
      break;
    }
    case 'tool-input-delta': {
      const part = toolPart(stream, chunk.toolCallId);
      if (part) part._args = (part._args || '') + chunk.inputTextDelta;
      break;
    }
    case 'tool-input-available':
    case 'tool-input-error': {
      let part = toolPart(stream, chunk.toolCallId);
      if (!part) {
        part = { type: 'tool-' + chunk.toolName, toolCallId: chunk.toolCallId };
        parts.push(part);
      }
      part.input = chunk.input;
      if (chunk.providerExecuted) part.providerExecuted = true;
      if (chunk.providerMetadata) part.callProviderMetadata = chunk.providerMetadata;
      part.state = chunk.type === 'tool-input-error' ? 'output-error' : 'input-available';
      if (chunk.errorText) part.errorText = chunk.errorText;
      break;
    }
    case 'tool-approval-request': {
      const part = toolPart(stream, chunk.toolCallId);
      if (part) {
        part.state = 'approval-requested';
        part.approval = { id: chunk.approvalId };
      }
      break;
    }
    case 'tool-output-available':
    case 'tool-output-error':
    case 'tool-output-denied': {
      const part = toolPart(stream, chunk.toolCallId);
      if (!part) break;
      if (chunk.type === 'tool-output-available') {
        part.state = 'output-available';
        part.output = chunk.output;
      } else if (chunk.type === 'tool-output-error') {
        part.state = 'output-error';
        part.errorText = chunk.errorText;
      } else {
        part.state = 'output-denied';
      }
      break;
    }
    case 'message-metadata':
      stream.message.metadata = Object.assign(stream.message.metadata || {}, chunk.messageMetadata);
      break;
    case 'error':
      stream.failed = true;
      setStatus(chunk.errorText, true);
      break;
    default:
      break; // finish-step, finish, abort, data and source chunks: nothing to show
  }
}

async function configure() {
  const response = await fetch('/api/configure');
  const config = await response.json();
  chat.durable = Boolean(config.durable);
  const select = $('model');
  for (const model of config.models) {
    const option = element('option', '', model.name);
    option.value = model.id;
    select.append(option);
  }
  select.hidden = config.models.length === 0;
  const tools = $('tools');
  for (const tool of config.builtinTools) {
    const label = element('label');
    const box = element('input');
    box.type = 'checkbox';
    box.value = tool.id;
    label.append(box, ' ' + tool.name);
    tools.append(label);
  }
}

async function loadStored() {
  const response = await fetch('/api/chats/' + encodeURIComponent(chat.id));
  if (!response.ok) return;
  const stored = await response.json();
  chat.messages = stored.messages;
  render();
  const last = chat.messages[chat.messages.length - 1];
  const asks = last && last.parts.some((p) => isTool(p) && p.state === 'approval-requested');
  if (stored.status === 'waiting' && !asks) {
    setStatus('The last answer was cut short.');
    const resume = element('button', 'resume', 'Continue');
    resume.type = 'button';
    resume.onclick = () => { resume.remove(); send(); };
    $('status').append(' ', resume);
  }
}

function submit(event) {
  event.preventDefault();
  const prompt = $('prompt');
  const text = prompt.value.trim();
  if (!text || chat.busy) return;
  prompt.value = '';
  chat.messages.push({ id: newId(), role: 'user', parts: [{ type: 'text', text: text }] });
  render();
  send();
}

async function start() {
  const path = decodeURIComponent(location.pathname.slice(1));
  chat.id = CHAT_ID.test(path) ? path : newId();
  if (path !== chat.id) history.replaceState(null, '', '/' + chat.id);
  $('composer').addEventListener('submit', submit);
  $('prompt').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) submit(event);
  });
  await configure();
  if (chat.durable) await loadStored();
  render();
  document.body.dataset.ready = 'true';
}

start().catch((error) => setStatus(String(error), true));
