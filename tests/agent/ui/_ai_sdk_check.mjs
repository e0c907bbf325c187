// Reads {"chunks": [...], "messages": [...]} on stdin and checks them with the Vercel AI SDK itself: each chunk
// against its UI message chunk schema, the chunks as a stream read into a message by `readUIMessageStream`,
// and the messages with `safeValidateUIMessages`. Prints the findings as JSON.
import { readUIMessageStream, safeValidateUIMessages, uiMessageChunkSchema } from 'ai';

let text = '';
for await (const data of process.stdin) text += data;
const input = JSON.parse(text);
const schema = uiMessageChunkSchema();
const invalid = [];
for (const chunk of input.chunks) {
  const checked = await schema.validate(chunk);
  if (!checked.success) invalid.push({ chunk, error: String(checked.error) });
}
let message = null;
let streamError = null;
try {
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of input.chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  for await (const snapshot of readUIMessageStream({ stream, onError: (e) => { streamError = String(e); } })) {
    message = snapshot;
  }
} catch (error) {
  streamError = String(error);
}
const messages = await safeValidateUIMessages({ messages: input.messages });
console.log(JSON.stringify({
  invalid,
  message,
  streamError,
  messagesValid: messages.success,
  messagesError: messages.success ? null : String(messages.error),
}));
