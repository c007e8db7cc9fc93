#!/usr/bin/env node
// flowdeck driven by the official TypeScript MCP SDK client (StdioClientTransport), as agent
// hosts built on Node drive it: the child's stdin and stdout are Unix socket pairs.
//
//   node client.mjs --server BIN --workflows DIR
//       The full round trip: every tool group (terminal, authoring, runs, guided, dynamic with
//       tools/list_changed), resources, prompts, a tool error, and a clean close. DIR must be a
//       scratch copy of the bundled workflows/ folder: the client writes into it.
//   node client.mjs --url URL --workflows DIR
//       The same round trip over streamable HTTP (StreamableHTTPClientTransport) against a
//       `flowdeck serve --http` of DIR at URL, with the bearer token FLOWDECK_HTTP_TOKEN; the
//       close ends the session (DELETE), whose id the server then refuses.
//   node client.mjs --launch JSON [--expect-workflow NAME]...
//       Launches exactly the server that JSON describes ({"command": ..., "args": [...],
//       "env": {...}}, the shape of an `mcpServers` entry), then a short round trip:
//       initialize, tools/list, workflow_list (which must show each NAME), a resource read, and
//       a clean close. This checks the README's client snippets.
//
// Exit status 0 with a one-line summary when everything passed; 1 with "FAIL ..." and the
// server's stderr otherwise. Every wait has a deadline.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

const CLIENT = 'ts-sdk';
const CALL_MS = 30_000; // one request
const OVERALL_MS = Number(process.env.FLOWDECK_CLIENT_DEADLINE_MS ?? 120_000);
const LIST_CHANGED_MS = 15_000;
const EXIT_MS = 5_000;

const STATIC_TOOLS = [
  'open_terminal', 'send_input', 'get_screen_content', 'search_output', 'await_output',
  'list_terminal_sessions',
  'exit_terminal', 'run_command', 'resize_terminal', 'get_workflow_schema', 'create_workflow',
  'workflow_list', 'workflow_get', 'workflow_validate', 'workflow_save', 'workflow_rename',
  'workflow_delete', 'workflow_preview_inputs', 'workflow_resolve_inputs',
  'workflow_preview_rendered', 'workflow_step_plan', 'run_workflow', 'run_status', 'run_events',
  'run_list', 'attention', 'workflow_cancel', 'run_feedback', 'workflow_purge_history', 'workflow_next',
];
// What `flowdeck mcp` offers unless told otherwise (docs/MCP.md, "Toolsets").
const DEFAULT_TOOLS = [
  'open_terminal', 'send_input', 'get_screen_content', 'search_output', 'await_output',
  'list_terminal_sessions', 'exit_terminal', 'run_command', 'resize_terminal', 'workflow_list',
  'workflow_preview_inputs', 'run_workflow', 'run_status', 'run_events', 'run_list',
  'attention', 'workflow_cancel', 'workflow_next',
];
const PROMPTS = [
  'workflow_author', 'workflow_extend', 'workflow_fix_validation', 'workflow_run_with_inputs',
  'format_command', 'clarify_params',
];

// ---------------------------------------------------------------------------------------------
// Arguments

function parseArgs(argv) {
  const opts = { expect: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === '--server') opts.server = value();
    else if (flag === '--workflows') opts.workflows = value();
    else if (flag === '--launch') opts.launch = value();
    else if (flag === '--url') opts.url = value();
    else if (flag === '--expect-workflow') opts.expect.push(value());
    else usage(`unknown argument ${flag}`);
  }
  opts.server ??= process.env.FLOWDECK_BIN;
  opts.workflows ??= process.env.FLOWDECK_WORKFLOWS;
  if (opts.url && !process.env.FLOWDECK_HTTP_TOKEN) usage('--url needs FLOWDECK_HTTP_TOKEN');
  if (!opts.launch && !(opts.url && opts.workflows) && (!opts.server || !opts.workflows)) {
    usage('give --server BIN (or FLOWDECK_BIN) and --workflows DIR, or --launch JSON');
  }
  return opts;
}

function usage(message) {
  console.error(`${CLIENT}: ${message}
usage: node client.mjs --server BIN --workflows DIR
       FLOWDECK_HTTP_TOKEN=T node client.mjs --url URL --workflows DIR
       node client.mjs --launch '{"command": "...", "args": [...]}' [--expect-workflow NAME]...`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Bookkeeping: steps, failures, deadlines

const passed = [];
let current = 'start';
let stderrTail = '';
let child = null;

function fail(message) {
  console.error(`FAIL [${CLIENT}] ${current}: ${message}`);
  if (stderrTail.trim()) console.error(`--- server stderr (last 4 KiB) ---\n${stderrTail}`);
  if (child && child.exitCode === null) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  process.exit(1);
}

/** A failed expectation: reported by its message alone. */
class CheckFailed extends Error {}

function check(condition, message, detail) {
  if (!condition) {
    const extra = detail === undefined ? '' : `: ${JSON.stringify(detail).slice(0, 2000)}`;
    throw new CheckFailed(`${message}${extra}`);
  }
}

async function step(name, body) {
  current = name;
  await body();
  passed.push(name);
}

/** `promise`, or a rejection naming `what` once `ms` have passed. */
function within(ms, promise, what) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------
// The connection

let client;
let transport;
let toolListChanges = 0;
let wakeListChanged = () => {};
let closing = false;

async function connect(command, args, env) {
  transport = new StdioClientTransport({
    command,
    args,
    env: { SHELL: '/bin/bash', ...(env ?? {}) },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk) => {
    stderrTail = (stderrTail + chunk.toString()).slice(-4096);
  });
  await handshake();
  // The SDK keeps the child private; the clean-close check needs its exit status.
  child = transport._process;
  check(child, 'the transport has no child process');
}

/** Over streamable HTTP to a running `flowdeck serve --http`, with its bearer token. */
async function connectHttp(url) {
  transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.FLOWDECK_HTTP_TOKEN}` } },
  });
  await handshake();
  check(transport.sessionId, 'the server gave no Mcp-Session-Id');
}

async function handshake() {
  client = new Client({ name: 'flowdeck-ts-client', version: '1.0.0' }, { capabilities: {} });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    toolListChanges += 1;
    wakeListChanged();
  });
  client.onerror = (error) => {
    if (!closing) console.error(`${CLIENT}: transport error: ${error?.message ?? error}`);
  };
  client.onclose = () => {
    if (!closing) fail('the server closed the connection');
  };
  await within(CALL_MS, client.connect(transport, { timeout: CALL_MS }), 'initialize');
}

/** The JSON payload of a tool result: structuredContent, or for errors the text content. */
function payloadOf(name, result) {
  const text = result.content?.find((c) => c.type === 'text')?.text;
  if (result.isError) {
    check(typeof text === 'string', `${name}: an error result without text content`, result);
    try {
      return JSON.parse(text);
    } catch {
      throw new CheckFailed(`${name}: the error's text content is not the JSON payload: ${text}`);
    }
  }
  check(result.structuredContent !== undefined, `${name}: no structuredContent`, result);
  check(typeof text === 'string', `${name}: no text content beside structuredContent`, result);
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CheckFailed(`${name}: the text content is not JSON: ${text.slice(0, 500)}`);
  }
  check(isDeepStrictEqual(parsed, result.structuredContent),
    `${name}: the text content and structuredContent differ`, { text: parsed });
  return result.structuredContent;
}

async function callRaw(name, args, options = {}) {
  const timeout = options.timeout ?? CALL_MS;
  const result = await within(timeout + 1000,
    client.callTool({ name, arguments: args }, undefined, { timeout, ...options }), name);
  return { isError: result.isError === true, payload: payloadOf(name, result) };
}

async function ok(name, args, options) {
  const { isError, payload } = await callRaw(name, args, options);
  check(!isError, `${name} failed`, payload);
  return payload;
}

async function toolError(name, args) {
  const { isError, payload } = await callRaw(name, args);
  check(isError, `${name} should have failed`, payload);
  return payload;
}

async function listTools() {
  const tools = [];
  let cursor;
  do {
    const page = await within(CALL_MS, client.listTools(cursor ? { cursor } : {}, { timeout: CALL_MS }), 'tools/list');
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Waits for a tools/list_changed after `seen` of them, with a deadline. */
function nextListChanged(seen, ms, what) {
  if (toolListChanges > seen) return Promise.resolve();
  return within(ms, new Promise((resolve) => {
    wakeListChanged = () => {
      if (toolListChanges > seen) resolve();
    };
  }), `notifications/tools/list_changed ${what}`);
}

/** Closes the client and checks that the server exits 0 on its own once its stdin closes. */
/** Over HTTP: the session ended with DELETE, after which its id is refused (404). */
async function cleanCloseHttp(url) {
  const session = transport.sessionId;
  closing = true;
  const started = Date.now();
  await within(CALL_MS, transport.terminateSession(), 'DELETE of the session');
  await within(CALL_MS, client.close(), 'client.close()');
  const after = await within(CALL_MS, fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${process.env.FLOWDECK_HTTP_TOKEN}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': session,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
  }), 'a request in the ended session');
  check(after.status === 404, 'the ended session is still served', after.status);
  return Date.now() - started;
}

async function cleanClose() {
  const proc = child;
  const exited = new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve({ code: proc.exitCode, signal: proc.signalCode });
    else proc.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const kills = [];
  const kill = proc.kill.bind(proc);
  proc.kill = (signal) => {
    kills.push(signal ?? 'SIGTERM');
    return kill(signal);
  };
  closing = true;
  const started = Date.now();
  await within(EXIT_MS + 2000, client.close(), 'client.close()');
  const status = await within(EXIT_MS, exited, 'the server exiting after its stdin closed');
  const ms = Date.now() - started;
  check(kills.length === 0,
    `the server did not exit within 2 s of its stdin closing; the SDK sent ${kills.join(', ')}`);
  check(status.code === 0 && status.signal === null, 'the server did not exit with status 0', status);
  return ms;
}

// ---------------------------------------------------------------------------------------------
// The full round trip

const WORKFLOW_NAME = /^[a-z0-9_]+$/;

function manifest(name, description) {
  return `name: ${name}
description: ${description}
arguments:
  WHO: { description: who to greet }
return_values:
  GREETING: { description: the greeting }
initial_state: greet
states:
  greet:
    action: { tool: run_command, params: { command: 'export GREETING="hello $WHO"' } }
    transitions: [{ condition: success, next_state: done }]
  done:
    action: { tool: get_screen_content }
`;
}

async function roundTrip(opts) {
  const dir = opts.workflows;
  const bundled = readdirSync(dir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .map((f) => f.replace(/\.(ya?ml|json)$/, ''))
    .filter((n) => WORKFLOW_NAME.test(n))
    .sort();
  check(bundled.includes('git_health') && bundled.includes('guided_review'),
    `${dir} is not a copy of the bundled workflows/ folder`, bundled);

  await step('initialize', async () => {
    if (opts.url) await connectHttp(opts.url);
    else await connect(opts.server, ['mcp', '--workflows', dir, '--toolsets', 'all']);
    const info = client.getServerVersion();
    check(info?.name === 'flowdeck', 'serverInfo.name is not flowdeck', info);
    const caps = client.getServerCapabilities();
    check(caps?.tools && caps?.resources && caps?.prompts, 'tools, resources and prompts are not all offered', caps);
    check(caps.tools.listChanged === true, 'tools.listChanged is not declared', caps);
  });

  await step('tools/list', async () => {
    const tools = await listTools();
    const names = tools.map((t) => t.name);
    for (const name of STATIC_TOOLS) check(names.includes(name), `tools/list lacks ${name}`, names);
    for (const name of bundled) check(names.includes(`wf_${name}`), `tools/list lacks wf_${name}`, names);
    for (const tool of tools) {
      check(tool.inputSchema?.type === 'object', `${tool.name}: inputSchema.type is not "object"`, tool.inputSchema);
      if (tool.outputSchema !== undefined) {
        check(tool.outputSchema?.type === 'object', `${tool.name}: outputSchema.type is not "object"`, tool.outputSchema);
      }
      check(typeof tool.description === 'string' && tool.description.length > 20, `${tool.name}: no useful description`);
    }
  });

  await step('terminal', async () => {
    const opened = await ok('open_terminal', {
      command: ['bash', '--norc', '--noprofile'],
      name: 'ts-client',
      env: { PS1: '$ ', HISTFILE: '/dev/null' },
    });
    const id = opened.session_id;
    check(typeof id === 'string' && opened.running === true, 'open_terminal returned no running session', opened);
    const ran = await ok('run_command', { session_id: id, command: 'echo hi', timeout: 20 });
    check(ran.outcome === 'completed' && ran.exit_code === 0 && ran.output === 'hi', 'run_command echo hi', ran);
    const sent = await ok('send_input', { session_id: id, input_text: 'echo MARK_$((6*7))\n' });
    check(sent.bytes > 0, 'send_input queued nothing', sent);
    const waited = await ok('await_output', { session_id: id, pattern: '^MARK_42$', timeout: 20 });
    check(waited.outcome === 'matched' && waited.matched_text === 'MARK_42', 'await_output did not match', waited);
    const screen = await ok('get_screen_content', { session_id: id });
    check(screen.content.includes('MARK_42'), 'the screen lacks MARK_42', screen);
    const listed = await ok('list_terminal_sessions', {});
    check(listed.sessions.some((s) => s.session_id === id), 'list_terminal_sessions lacks the session', listed);
    const resized = await ok('resize_terminal', { session_id: id, cols: 100, rows: 30 });
    check(resized.cols === 100 && resized.rows === 30 && resized.clamped === false, 'resize_terminal', resized);
    const closed = await ok('exit_terminal', { session_id: id });
    check(closed.teardown?.survivors === 0, 'exit_terminal left survivors', closed);
  });

  const saved = 'ts_hello';
  await step('authoring', async () => {
    const schema = await ok('get_workflow_schema', {});
    check(schema.schema?.properties?.states, 'get_workflow_schema has no states property', Object.keys(schema));
    const list = await ok('workflow_list', {});
    const listed = list.workflows.map((w) => w.name).sort();
    check(isDeepStrictEqual(listed, bundled), 'workflow_list is not the folder', listed);
    const doc = await ok('workflow_get', { name: 'git_health' });
    check(doc.format === 'yaml' && /^[0-9a-f]{64}$/.test(doc.version), 'workflow_get format or version', doc.version);
    check(doc.content === readFileSync(join(dir, 'git_health.yaml'), 'utf8'), 'workflow_get content is not the file');
    const broken = 'name: x\ndescription: d\ninitial_state: a\nstates: {a: {action: {tool: sned_input}}}\n';
    const checked = await ok('workflow_validate', { content: broken });
    check(checked.valid === false && checked.violations.length > 0, 'a broken manifest passed', checked);
    const v = checked.violations[0];
    check(Number.isInteger(v.line) && v.line >= 1 && Number.isInteger(v.column), 'violations carry no line and column', v);
    const good = await ok('workflow_validate', { content: manifest(saved, 'Greets someone.') });
    check(good.valid === true, 'a good manifest failed validation', good);
    const stored = await ok('workflow_save', { content: manifest(saved, 'Greets someone (saved by the TypeScript client).') });
    check(stored.name === saved && /^[0-9a-f]{64}$/.test(stored.version), 'workflow_save', stored);
    const plan = await ok('workflow_step_plan', { name: saved });
    check(isDeepStrictEqual(plan.steps.map((s) => s.state), ['greet', 'done']), 'workflow_step_plan', plan);
    const inputs = await ok('workflow_preview_inputs', { name: saved });
    check(inputs.inputs.length === 1 && inputs.inputs[0].name === 'WHO', 'workflow_preview_inputs', inputs);
    const renamed = await ok('workflow_rename', { name: saved, new_name: `${saved}_renamed` });
    check(JSON.stringify(renamed).includes(`${saved}_renamed`), 'workflow_rename', renamed);
    await ok('workflow_delete', { name: `${saved}_renamed` });
    const after = await ok('workflow_list', {});
    check(!after.workflows.some((w) => w.name.startsWith(saved)), 'the workflow was not deleted', after);
  });

  let runId;
  await step('runs', async () => {
    const progress = [];
    const result = await ok('run_workflow', { workflow_name: 'git_health', inputs: { REPO_DIR: dir }, wait: true },
      { timeout: 60_000, onprogress: (p) => progress.push(p) });
    check(result.success === true && result.final_state === 'completed', 'git_health did not complete', result);
    check(typeof result.return_values?.GIT_HEALTH === 'string', 'git_health returned no GIT_HEALTH', result.return_values);
    check(progress.length > 0, 'no notifications/progress while waiting for the run');
    const started = await ok('run_workflow', { workflow_name: 'git_health', inputs: { REPO_DIR: dir }, wait: false });
    runId = started.run_id;
    check(typeof runId === 'string', 'run_workflow wait:false returned no run_id', started);
    let cursor = 0;
    let finished = false;
    let events = 0;
    const until = Date.now() + 60_000;
    while (!finished) {
      check(Date.now() < until, 'run_events did not report the run finished within 60 s');
      const page = await ok('run_events', { run_id: runId, after: cursor, wait_seconds: 10 }, { timeout: 20_000 });
      check(Number.isInteger(page.next_cursor) && page.next_cursor >= cursor, 'run_events cursor', page);
      cursor = page.next_cursor;
      events += page.events.length;
      finished = page.finished === true;
    }
    check(events > 0, 'run_events returned no events');
    const status = await ok('run_status', { run_id: runId });
    check(status.status === 'finished' && status.result?.final_state === 'completed', 'run_status', status);
    const list = await ok('run_list', {});
    check(JSON.stringify(list.runs).includes(runId), 'run_list lacks the run', list);
    await ok('run_feedback', { run_id: runId, score: 1, text: 'fine, from the TypeScript client' });
  });

  await step('guided', async () => {
    const next = await ok('workflow_next', { workflowId: 'guided_review', completedSteps: ['show_changes'] });
    check(next.isComplete === false && next.step?.id === 'ask_summary', 'workflow_next', next);
    check(next.guidance?.validationCriteria?.length > 0, 'workflow_next gave no validation criteria', next);
  });

  await step('dynamic', async () => {
    const result = await ok('wf_git_health', { REPO_DIR: dir }, { timeout: 60_000 });
    check(result.final_state === 'completed', 'wf_git_health did not complete', result);
    // A manifest written on disk by someone else becomes a tool, announced by list_changed.
    const name = 'ts_disk';
    const seen = toolListChanges;
    writeFileSync(join(dir, `${name}.yaml`), manifest(name, 'Greets someone (written on disk).'));
    let count = seen;
    for (;;) {
      await nextListChanged(count, LIST_CHANGED_MS, `for wf_${name}`);
      count = toolListChanges;
      const tools = await listTools();
      if (tools.some((t) => t.name === `wf_${name}`)) break;
    }
    const ran = await ok(`wf_${name}`, { WHO: 'disk' }, { timeout: 60_000 });
    check(ran.return_values?.GREETING === 'hello disk', `wf_${name}`, ran);
  });

  await step('resources', async () => {
    const { resources } = await within(CALL_MS, client.listResources({}, { timeout: CALL_MS }), 'resources/list');
    const uris = resources.map((r) => r.uri);
    for (const uri of ['flowdeck://workflows', 'flowdeck://spec', 'flowdeck://schema']) {
      check(uris.includes(uri), `resources/list lacks ${uri}`, uris);
    }
    const { resourceTemplates } = await within(CALL_MS,
      client.listResourceTemplates({}, { timeout: CALL_MS }), 'resources/templates/list');
    const templates = resourceTemplates.map((t) => t.uriTemplate);
    check(templates.includes('flowdeck://workflows/{name}'), 'no flowdeck://workflows/{name} template', templates);
    const read = async (uri) => {
      const r = await within(CALL_MS, client.readResource({ uri }, { timeout: CALL_MS }), `resources/read ${uri}`);
      check(r.contents?.[0]?.uri === uri && typeof r.contents[0].text === 'string', `resources/read ${uri}`, r);
      return r.contents[0].text;
    };
    const list = JSON.parse(await read('flowdeck://workflows'));
    check(list.workflows.some((w) => w.name === 'git_health'), 'flowdeck://workflows lacks git_health', list);
    check((await read('flowdeck://spec')).includes('initial_state'), 'flowdeck://spec is not the manifest reference');
    const stored = await read('flowdeck://workflows/git_health');
    check(stored === readFileSync(join(dir, 'git_health.yaml'), 'utf8'), 'flowdeck://workflows/git_health is not the file');
  });

  await step('prompts', async () => {
    const { prompts } = await within(CALL_MS, client.listPrompts({}, { timeout: CALL_MS }), 'prompts/list');
    const names = prompts.map((p) => p.name);
    for (const name of PROMPTS) check(names.includes(name), `prompts/list lacks ${name}`, names);
    const got = await within(CALL_MS,
      client.getPrompt({ name: 'workflow_run_with_inputs', arguments: { name: 'git_health' } }, { timeout: CALL_MS }),
      'prompts/get');
    const text = got.messages.map((m) => m.content?.text ?? '').join('\n');
    check(got.messages.length > 0 && text.includes('REPO_DIR'), 'prompts/get workflow_run_with_inputs', got);
  });

  await step('errors', async () => {
    const payload = await toolError('workflow_get', { name: 'no_such_workflow' });
    check(payload.error_code === 'WORKFLOW_NOT_FOUND' && payload.code === -32001 && payload.category === 'not_found',
      'the error payload', payload);
    check(typeof payload.message === 'string' && typeof payload.suggested_action === 'string'
      && typeof payload.correlation_id === 'string' && typeof payload.retryable === 'boolean', 'the error payload fields', payload);
    let protocolError;
    try {
      await client.callTool({ name: 'no_such_tool', arguments: {} }, undefined, { timeout: CALL_MS });
    } catch (error) {
      protocolError = error;
    }
    check(protocolError?.code === -32602, 'an unknown tool is not a -32602 protocol error', protocolError?.message);
  });

  let closeMs;
  await step('close', async () => {
    closeMs = opts.url ? await cleanCloseHttp(opts.url) : await cleanClose();
  });
  return opts.url ? `session ended in ${closeMs} ms` : `exit 0 in ${closeMs} ms`;
}

// ---------------------------------------------------------------------------------------------
// The README snippet: exactly the command and args of a client config

async function launch(opts) {
  let config;
  try {
    config = JSON.parse(opts.launch);
  } catch (error) {
    usage(`--launch is not JSON: ${error.message}`);
  }
  if (typeof config.command !== 'string' || !Array.isArray(config.args)) {
    usage('--launch needs {"command": "...", "args": [...]}');
  }
  await step('initialize', async () => {
    await connect(config.command, config.args, config.env);
    check(client.getServerVersion()?.name === 'flowdeck', 'serverInfo.name is not flowdeck', client.getServerVersion());
  });
  await step('tools/list', async () => {
    const names = (await listTools()).map((t) => t.name);
    for (const name of DEFAULT_TOOLS) check(names.includes(name), `tools/list lacks ${name}`, names);
    check(names.length === DEFAULT_TOOLS.length, 'the snippet offers more than the default toolsets', names);
  });
  await step('workflow_list', async () => {
    const list = await ok('workflow_list', {});
    const names = list.workflows.map((w) => w.name);
    for (const name of opts.expect) check(names.includes(name), `workflow_list lacks ${name}: the server serves another folder`, names);
  });
  await step('resources/read', async () => {
    const r = await within(CALL_MS, client.readResource({ uri: 'flowdeck://workflows' }, { timeout: CALL_MS }), 'resources/read');
    check(r.contents?.length === 1, 'flowdeck://workflows', r);
  });
  let closeMs;
  await step('close', async () => {
    closeMs = await cleanClose();
  });
  return `exit 0 in ${closeMs} ms`;
}

// ---------------------------------------------------------------------------------------------

const opts = parseArgs(process.argv.slice(2));
const overall = setTimeout(() => fail(`the overall deadline of ${OVERALL_MS} ms passed`), OVERALL_MS);
try {
  const sdk = JSON.parse(readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8')).version;
  const how = opts.launch ? await launch(opts) : await roundTrip(opts);
  clearTimeout(overall);
  console.log(`PASS [${CLIENT} ${sdk}] ${passed.join(', ')} (${how})`);
  process.exit(0);
} catch (error) {
  // The SDK's own errors (a timeout, a protocol error) read well as messages; anything else
  // is a bug in this script, and its stack says where.
  const sdkError = error?.constructor?.name === 'McpError';
  fail(error instanceof CheckFailed || sdkError ? error.message : error?.stack ?? String(error));
}
