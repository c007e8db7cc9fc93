#!/usr/bin/env node
// The per-call cost an agent feels through the official TypeScript SDK's client, for
// `cargo bench --bench agents_cost` (benches/agents_cost.rs runs this beside the Python SDKs):
//
//   node calls.mjs --server BIN --workflows DIR [--rounds N] [--terminals M]
//
// Over `flowdeck mcp` (stdio), N calls each after a warm-up: `list_terminal_sessions` with no
// terminal open, then with M open (the SDK checks every result against its outputSchema), and
// the echo round trip (`send_input` + `await_output`). Prints one JSON object:
// {"sdk": "ts 1.x.y", "client": {"noop_0": [median, p90], "noop_M": [...], "echo": [...]}},
// in milliseconds. Every call has a deadline.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const CALL_MS = 30_000;
const SHELL = { command: ['bash', '--norc', '--noprofile'], env: { PS1: '$ ' } };

function parseArgs(argv) {
  const opts = { rounds: 300, terminals: 3 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--server') opts.server = value;
    else if (flag === '--workflows') opts.workflows = value;
    else if (flag === '--rounds') opts.rounds = Number(value);
    else if (flag === '--terminals') opts.terminals = Number(value);
    else throw new Error(`unknown argument ${flag}`);
  }
  if (!opts.server || !opts.workflows) throw new Error('give --server BIN and --workflows DIR');
  return opts;
}

function figures(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
  return [Number(at(0.5).toFixed(3)), Number(at(0.9).toFixed(3))];
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const client = new Client({ name: 'flowdeck-calls-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({
    command: opts.server,
    args: ['mcp', '--workflows', opts.workflows],
    env: { ...process.env },
    stderr: 'inherit',
  }), { timeout: CALL_MS });
  // The SDK learns the output schemas from the list; listing first keeps that out of the figures.
  await client.listTools(undefined, { timeout: CALL_MS });
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_MS });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent;
  };
  const out = {};
  const timed = async (label, one) => {
    for (let i = 0; i < Math.max(5, opts.rounds / 10); i++) await one();
    const samples = [];
    for (let i = 0; i < opts.rounds; i++) {
      const started = performance.now();
      await one();
      samples.push(performance.now() - started);
    }
    out[label] = figures(samples);
  };
  await timed('noop_0', () => call('list_terminal_sessions', {}));
  const ids = [];
  for (let i = 0; i < opts.terminals; i++) ids.push((await call('open_terminal', SHELL)).session_id);
  await timed(`noop_${opts.terminals}`, () => call('list_terminal_sessions', {}));
  let k = 0;
  await timed('echo', async () => {
    k += 1;
    await call('send_input', { session_id: ids[0], input_text: `echo t${k}\n` });
    await call('await_output', { session_id: ids[0], pattern: `t${k}\\r?\\n`, timeout: 10 });
  });
  for (const id of ids) await call('exit_terminal', { session_id: id });
  await client.close();
  const sdk = JSON.parse(readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8')).version;
  console.log(JSON.stringify({ sdk: `ts ${sdk}`, client: out }));
}

const deadline = setTimeout(() => {
  console.error('calls: the overall deadline passed');
  process.exit(1);
}, 600_000);
try {
  await main();
  clearTimeout(deadline);
  process.exit(0);
} catch (error) {
  console.error(`calls: ${error?.stack ?? error}`);
  process.exit(1);
}
