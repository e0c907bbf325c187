"""A stand-in for the mermaid CLI `mmdc`: checks its arguments as mmdc would, and writes what it was asked as JSON.

`FAKE_MMDC_MODE=fail` makes it fail like mmdc on a parse error; `FAKE_MMDC_MODE=no-output` exits 0 without
writing the image; `FAKE_MMDC_MODE=hang` sleeps for a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(prog='mmdc')
    parser.add_argument('-i', '--input', required=True)
    parser.add_argument('-o', '--output', required=True)
    parser.add_argument('-e', '--outputFormat', choices=['svg', 'png', 'pdf'], required=True)
    parser.add_argument('-q', '--quiet', action='store_true')
    parser.add_argument('-p', '--puppeteerConfigFile')
    parser.add_argument('-t', '--theme', choices=['default', 'forest', 'dark', 'neutral'])
    parser.add_argument('-b', '--backgroundColor')
    parser.add_argument('-w', '--width', type=int)
    parser.add_argument('-H', '--height', type=int)
    parser.add_argument('-s', '--scale', type=float)
    parser.add_argument('-f', '--pdfFit', action='store_true')
    args = parser.parse_args()
    mode = os.environ.get('FAKE_MMDC_MODE', '')

    code = Path(args.input).read_text(encoding='utf-8')
    if not code.startswith(('stateDiagram-v2\n', '---\ntitle: ')):
        print(f'Error: not a state diagram: {code[:30]!r}', file=sys.stderr)
        return 1
    if Path(args.output).suffix != f'.{args.outputFormat}':
        print(f'Error: output {args.output} does not end in .{args.outputFormat}', file=sys.stderr)
        return 1
    if args.puppeteerConfigFile is not None:
        json.loads(Path(args.puppeteerConfigFile).read_text())
    if mode == 'fail':
        print('Error: Parse error on line 2:\n...A --> --> B\n------^', file=sys.stderr)
        print('Parser.parseError (https://x.invalid/mermaid.esm.mjs:188:21)', file=sys.stderr)
        print('    at async renderMermaid (file:///mmdc/src/index.js:480:22)', file=sys.stderr)
        return 1
    if mode == 'hang':
        time.sleep(60)
    if mode == 'no-output':
        print('rendered nothing', file=sys.stderr)
        return 0
    options = {
        key: value
        for key, value in vars(args).items()
        if key not in ('input', 'output', 'outputFormat') and value not in (None, False)
    }
    if 'puppeteerConfigFile' in options:
        options['puppeteerConfigFile'] = Path(options['puppeteerConfigFile']).name
    image = {'format': args.outputFormat, 'options': options, 'code': code}
    Path(args.output).write_text(json.dumps(image))
    return 0


if __name__ == '__main__':
    sys.exit(main())
