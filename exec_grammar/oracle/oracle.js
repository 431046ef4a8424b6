// The V8 witness for exec_grammar: runs Codex code-mode cells as ES modules in a fresh V8 context
// against a simulated code-mode runtime, and reports what V8 did with each one.
//
//   node --experimental-vm-modules oracle.js < scripts.jsonl > verdicts.jsonl
//
// Input: one JSON object a line, {"id": ..., "script": "..."}. Output: one JSON object a line, in order:
//   {"id", "verdict": "ok" | "parse" | "link" | "runtime" | "timeout" | "pending",
//    "error": "SyntaxError: ..." | null,
//    "calls": [{"name", "json" (JSON.stringify of the argument, or null when it throws / is undefined),
//               "json_error" (why it threw), "line", "column" (1-based call site in the script, when
//               the call comes straight from it), "after_end" (made once the cell had ended)}],
//    "exited": bool, "limit": bool}
// "parse": V8 rejected the module at compile time (no statement ran). "runtime": it threw while running
// (calls before the throw are reported). "pending": the top-level await never settled (the cell would
// wait forever). Nothing real is executed: the context has no require, process, filesystem or network;
// tools record their call and resolve at once with a plausible result; timers run in virtual time.
// Needs node alone (>= 18): no package is installed.
//
//   node --experimental-vm-modules oracle.js --compile-only < scripts.jsonl > verdicts.jsonl
//
// compiles each cell as the same module and runs nothing: {"id", "verdict": "ok" | "parse", "error"}. The
// module verdict alone, about 60 us a cell (the differential fuzzer asks it for hundreds of thousands).
'use strict';
const vm = require('vm');
const readline = require('readline');

// --timeout-ms N: the time one cell may run synchronously (a promise loop included); default 1000.
const argTimeout = process.argv.indexOf('--timeout-ms');
const TIMEOUT_MS = argTimeout > 0 ? Number(process.argv[argTimeout + 1]) : 1000;
const MAX_CALLS = 5000;
const MAX_TIMERS = 2000;
const KNOWN_TOOLS = ['exec_command', 'write_stdin', 'apply_patch', 'view_image', 'update_plan',
  'shell_command', 'shell', 'web__run', 'spawn_agent', 'request_user_input'];

// Runs inside the context, so every promise and function a script sees belongs to its own realm.
const SETUP = `(function (hooks, known) {
  const record = (name, args, stack) => hooks.record(name, args, stack);
  'use strict';
  const g = globalThis;
  const chameleonHandler = {
    get(t, k) {
      if (k === 'then') return undefined;
      if (k === Symbol.toPrimitive) return (hint) => (hint === 'number' ? 0 : '');
      if (k === Symbol.iterator) return function* () {};
      if (typeof k === 'symbol') return undefined;
      if (k === 'length') return 0;
      if (k === 'toString' || k === 'valueOf' || k === 'toJSON') return () => '';
      return chameleon();
    },
    apply() { return chameleon(); },
    construct() { return chameleon(); },
    has() { return false; },
  };
  function chameleon() { return new Proxy(function () {}, chameleonHandler); }
  function result(base) {
    return new Proxy(base, {
      get(t, k) {
        if (k in t || typeof k === 'symbol' || k === 'then') return t[k];
        return chameleon();
      },
    });
  }
  function resultFor(name) {
    if (name === 'exec_command' || name === 'shell_command' || name === 'shell' || name === 'write_stdin')
      return result({ output: '', exit_code: 0, stdout: '', stderr: '', wall_time_seconds: 0 });
    if (name === 'apply_patch') return 'Done!';
    return result({ content: [], isError: false });
  }
  const made = Object.create(null);
  function tool(name) {
    if (made[name]) return made[name];
    const f = function (...args) {
      record(name, args, new Error().stack);
      return Promise.resolve(resultFor(name));
    };
    Object.defineProperty(f, 'name', { value: name });
    made[name] = f;
    return f;
  }
  const target = Object.create(null);
  for (const n of known) target[n] = tool(n);
  const NOT_TOOLS = new Set(['then', 'toJSON', 'constructor', 'toString', 'valueOf', 'hasOwnProperty',
    'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__proto__', 'inspect']);
  g.tools = new Proxy(target, {
    get(t, k) {
      if (typeof k === 'symbol' || NOT_TOOLS.has(k)) return undefined;
      return tool(k);
    },
    has(t, k) { return typeof k === 'string' && !NOT_TOOLS.has(k); },
  });
  g.ALL_TOOLS = known.map((name) => ({ name, description: name }));
  const texts = [];
  g.text = (v) => { texts.push(v); };
  g.image = (v) => { texts.push(v); };
  g.forward_output = (...v) => { texts.push(v); };
  g.notify = (v) => { texts.push(v); };
  const stored = new Map();
  g.store = (k, v) => { stored.set(k, v); };
  g.load = (k) => stored.get(k);
  g.yield_control = () => {};
  const EXIT = { exit: true };
  g.__exit_token = EXIT;
  g.exit = () => { throw EXIT; };
  const timers = [];
  let seq = 0;
  g.setTimeout = (fn, ms, ...args) => {
    const id = ++seq;
    timers.push({ id, at: Number(ms) || 0, seq: id, fn, args });
    return id;
  };
  g.clearTimeout = (id) => {
    const i = timers.findIndex((t) => t.id === id);
    if (i >= 0) timers.splice(i, 1);
  };
  hooks.reset = () => {
    stored.clear();
    texts.length = 0;
    timers.length = 0;
  };
  g.__run_timer = () => {
    if (!timers.length) return false;
    timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const t = timers.shift();
    for (const r of timers) r.at -= t.at;
    if (typeof t.fn === 'function') t.fn(...t.args);
    return true;
  };
})`;

function describe(err) {
  if (err && typeof err === 'object' && typeof err.name === 'string' && typeof err.message === 'string')
    return `${err.name}: ${err.message}`;
  try { return `thrown: ${String(err)}`; } catch (e) { return 'thrown: (unprintable)'; }
}

const SITE_RE = /oracle-script\.mjs:(\d+):(\d+)/;

// A fresh context costs ~1.5 ms: one is shared by consecutive scripts (module code is strict, so a
// script's declarations stay in its module; its timers, store and texts are reset), and replaced after
// 100 scripts or after any script that may change a global (it names globalThis, a prototype, a
// code-mode global or a builtin followed by an assignment).
const MUTATES = /globalThis|prototype|__proto__|defineProperty|setPrototypeOf|Reflect|eval|Function|constructor|\b(?:Object|Array|String|Number|Boolean|JSON|Math|Promise|Date|RegExp|Map|Set|Symbol|Error|text|image|store|load|notify|tools|exit|yield_control|setTimeout|clearTimeout|ALL_TOOLS|forward_output)\s*(?:\.\s*[\w$]+\s*|\[[^\]]*\]\s*)*(?:[-+*\/%&|^]|\*\*|<<|>>>?|&&|\|\||\?\?)?=(?!=)/;
let shared = null;
let sharedUses = 0;
let sharedDirty = false;

function freshContext() {
  const context = vm.createContext({}, { microtaskMode: 'afterEvaluate', codeGeneration: { strings: true, wasm: false } });
  const hooks = { record: null, reset: null };
  vm.runInContext(SETUP, context, { filename: 'oracle-setup.js', timeout: TIMEOUT_MS })(hooks, KNOWN_TOOLS);
  return { context, hooks };
}

function contextFor(script) {
  const risky = MUTATES.test(script);
  if (shared === null || sharedDirty || sharedUses >= 100) {
    shared = freshContext();
    sharedUses = 0;
  }
  sharedUses++;
  sharedDirty = risky;
  return shared;
}

async function run(script) {
  const calls = [];
  let ended = false;
  let limit = false;
  const record = (name, args, stack) => {
    if (calls.length >= MAX_CALLS) { limit = true; throw new Error('oracle: call limit'); }
    const call = { name: String(name), json: null, json_error: null, line: null, column: null, after_end: ended };
    if (args.length) {
      try {
        const j = JSON.stringify(args[0]);
        call.json = j === undefined ? null : j;
        if (j === undefined) call.json_error = 'undefined';
      } catch (e) { call.json_error = describe(e); }
    } else call.json_error = 'no argument';
    // The first frame in the module is the call site, unless the call came through eval/Function code.
    const lines = String(stack).split('\n');
    for (let i = 1; i < lines.length; i++) {
      if (lines[i].includes('oracle-setup')) continue;
      const m = SITE_RE.exec(lines[i]);
      if (m && !lines[i].includes('eval at')) { call.line = Number(m[1]); call.column = Number(m[2]); }
      break;
    }
    calls.push(call);
  };
  const { context, hooks } = contextFor(script);
  hooks.reset();
  hooks.record = record;
  const out = { verdict: 'ok', error: null, calls, exited: false, limit: false };
  let mod;
  try {
    mod = new vm.SourceTextModule(script, { context, identifier: 'file:///oracle-script.mjs' });
  } catch (e) {
    out.verdict = 'parse';
    out.error = describe(e);
    return out;
  }
  try {
    await mod.link(() => { throw new Error('imports are not available in code mode'); });
  } catch (e) {
    out.verdict = 'link';
    out.error = describe(e);
    return out;
  }
  const settle = (e) => {
    if (e === context.__exit_token) { out.exited = true; return; }
    out.verdict = /Script execution timed out/.test(describe(e)) ? 'timeout' : 'runtime';
    out.error = describe(e);
  };
  // The context drains its own microtasks after each entry into it (microtaskMode afterEvaluate), so
  // the timeout covers promise loops too; the module's promise settles during such a drain.
  let done = false;
  const drain = (code) => vm.runInContext(code, context, { timeout: TIMEOUT_MS });
  try {
    const p = mod.evaluate({ timeout: TIMEOUT_MS });
    p.then(() => { done = true; }, (e) => { done = true; settle(e); });
    drain('0');
  } catch (e) {
    settle(e);
    done = true;
  }
  // evaluate()'s promise belongs to node's realm: its callbacks run on node's queue, so let it run.
  const settleHost = () => new Promise((r) => setImmediate(r));
  await settleHost();
  // Timers in virtual time until the top level settles.
  let timersRun = 0;
  while (!done && out.verdict === 'ok' && !out.exited) {
    if (timersRun >= MAX_TIMERS) { limit = true; break; }
    let ran = false;
    try {
      ran = drain('__run_timer()');
    } catch (e) {
      // a throw in a timer callback is an uncaught error of the cell (or the time limit)
      settle(e);
      break;
    }
    timersRun++;
    await settleHost();
    if (!ran) break;
  }
  if (mod.status === 'errored' && out.verdict === 'ok' && !out.exited) settle(mod.error);
  if (!done && out.verdict === 'ok' && !out.exited) out.verdict = 'pending';
  ended = true;
  // Calls a timer makes once the top level has settled are recorded, flagged after_end.
  for (let i = 0; i < 50; i++) {
    try { if (!drain('__run_timer()')) break; } catch (e) { break; }
  }
  out.limit = limit;
  return out;
}

// --compile-only: the module compile of run() and nothing else, in one context (compiling runs nothing,
// so no cell can change what the next one sees).
let compileContext = null;
function compileOnly(script) {
  if (compileContext === null) compileContext = vm.createContext({});
  try {
    new vm.SourceTextModule(script, { context: compileContext, identifier: 'file:///oracle-script.mjs' });
  } catch (e) {
    return { verdict: 'parse', error: describe(e) };
  }
  return { verdict: 'ok', error: null };
}

async function main() {
  const only = process.argv.includes('--compile-only');
  // A cell's rejected top-level promise is read from the module's status; node must not abort on it.
  process.on('unhandledRejection', () => {});
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    let req;
    try { req = JSON.parse(line); } catch (e) { process.stdout.write(JSON.stringify({ id: null, verdict: 'bad-input', error: describe(e), calls: [] }) + '\n'); continue; }
    let res;
    try {
      res = only ? compileOnly(String(req.script)) : await run(String(req.script));
    } catch (e) {
      res = { verdict: 'oracle-error', error: describe(e), calls: [], exited: false, limit: false };
    }
    res.id = req.id;
    process.stdout.write(JSON.stringify(res) + '\n');
  }
}

main();
