#!/usr/bin/env node
// The figures of `cargo bench --bench http` (benches/http.rs starts the server and runs this):
// one client library, the official TypeScript SDK, against one server, over both transports.
//
//   FLOWDECK_HTTP_TOKEN=T node bench.mjs --server BIN --workflows DIR --url URL [--rounds N] [--sessions M]
//
// 1. The round trip of a tool call (`list_terminal_sessions`) over stdio (`flowdeck mcp`, relayed
//    to the folder's server, as agent hosts run it) and over streamable HTTP, N calls each,
//    alternating, after a warm-up.
// 2. M sessions over HTTP at once, each connecting and calling one tool: the wall time from
//    the first connect to the last answer, then every session ended.
//
// Prints one JSON object: {"stdio_ms": [...], "http_ms": [...], "sessions": M,
// "sessions_wall_ms": x}. Between the phases it says so on stderr ("round trips done",
// "sessions open") and waits for a line on stdin, so that the caller can read the server's
// memory at those moments. Every wait has a deadline.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const DEADLINE_MS = 120_000;

function parseArgs(argv) {
  const opts = { rounds: 200, sessions: 50 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--server') opts.server = value;
    else if (flag === '--workflows') opts.workflows = value;
    else if (flag === '--url') opts.url = value;
    else if (flag === '--rounds') opts.rounds = Number(value);
    else if (flag === '--sessions') opts.sessions = Number(value);
    else throw new Error(`unknown argument ${flag}`);
  }
  if (!opts.server || !opts.workflows || !opts.url || !process.env.FLOWDECK_HTTP_TOKEN) {
    throw new Error('give --server, --workflows, --url and FLOWDECK_HTTP_TOKEN');
  }
  return opts;
}

function overHttp(url) {
  return new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.FLOWDECK_HTTP_TOKEN}` } },
  });
}

async function connected(transport) {
  const client = new Client({ name: 'flowdeck-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 30_000 });
  return client;
}

async function timedCall(client) {
  const started = performance.now();
  await client.callTool({ name: 'list_terminal_sessions', arguments: {} }, undefined, { timeout: 30_000 });
  return performance.now() - started;
}

async function roundTrips(opts) {
  const stdio = await connected(new StdioClientTransport({
    command: opts.server,
    args: ['mcp', '--workflows', opts.workflows],
    env: { ...process.env },
    stderr: 'inherit',
  }));
  const httpTransport = overHttp(opts.url);
  const http = await connected(httpTransport);
  for (let i = 0; i < 20; i++) {
    await timedCall(stdio);
    await timedCall(http);
  }
  const stdioMs = [];
  const httpMs = [];
  for (let i = 0; i < opts.rounds; i++) {
    stdioMs.push(await timedCall(stdio));
    httpMs.push(await timedCall(http));
  }
  await httpTransport.terminateSession();
  await http.close();
  await stdio.close();
  return { stdioMs, httpMs };
}

/** Says `what` on stderr and waits for the caller's line on stdin. */
async function pause(what) {
  console.error(what);
  await new Promise((resolve) => process.stdin.once('data', resolve));
}

async function manySessions(opts) {
  await pause('round trips done');
  const started = performance.now();
  const sessions = await Promise.all(Array.from({ length: opts.sessions }, async () => {
    const transport = overHttp(opts.url);
    const client = await connected(transport);
    await timedCall(client);
    return { transport, client };
  }));
  const wallMs = performance.now() - started;
  await pause('sessions open');
  await Promise.all(sessions.map(async ({ transport, client }) => {
    await transport.terminateSession();
    await client.close();
  }));
  return wallMs;
}

const deadline = setTimeout(() => {
  console.error(`bench: the deadline of ${DEADLINE_MS} ms passed`);
  process.exit(1);
}, DEADLINE_MS);
try {
  const opts = parseArgs(process.argv.slice(2));
  const { stdioMs, httpMs } = await roundTrips(opts);
  const sessionsWallMs = await manySessions(opts);
  clearTimeout(deadline);
  console.log(JSON.stringify({
    stdio_ms: stdioMs,
    http_ms: httpMs,
    sessions: opts.sessions,
    sessions_wall_ms: sessionsWallMs,
  }));
  process.exit(0);
} catch (error) {
  console.error(`bench: ${error?.stack ?? error}`);
  process.exit(1);
}
