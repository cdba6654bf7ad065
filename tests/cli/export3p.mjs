// export3p.mjs - gpurec's exports read by third-party tools from npm, for
// tests/cli/export3p.sh, which compares what this prints with gpurec's own
// answers.  GR_NPM names the directory whose node_modules hold
// tests/cli/npm/package.json's packages (build/npm).
//
//   node export3p.mjs duckdb FILE.sql     each line of FILE.sql run by
//                                         DuckDB, offline: autoloading and
//                                         autoinstalling of extensions off,
//                                         so nothing is downloaded; prints
//                                         "== SQL", then the columns and
//                                         rows as csv (NULL empty)
//   node export3p.mjs timeline TRACE.json loaded by devtools-timeline-model
//                                         (Chrome DevTools' trace model)
//   node export3p.mjs engine TRACE.json   loaded by @paulirish/trace_engine
//                                         (the DevTools Performance panel's
//                                         trace engine)
// Either trace reader prints what it found; an exception is an exit 1.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire } from 'node:module';

const require = createRequire(path.resolve(process.env.GR_NPM || '.',
					   'package.json'));

function cell(v) {
	if (v === null || v === undefined)
		return '';
	const s = String(v);
	return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

async function duckdb(file) {
	const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));
	const db = await DuckDBInstance.create(':memory:', {
		autoinstall_known_extensions: 'false',
		autoload_known_extensions: 'false',
	});
	const c = await db.connect();
	for (const sql of fs.readFileSync(file, 'utf8').split('\n')) {
		if (!sql.trim())
			continue;
		const r = await c.runAndReadAll(sql);
		console.log('== ' + sql);
		console.log(r.columnNames().map(cell).join(','));
		for (const row of r.getRows())
			console.log(row.map(cell).join(','));
	}
}

// devtools-timeline-model runs DevTools' front end in a vm context with
// stubs of the browser it needs.  Its stubs lack Common.console, which the
// model calls to warn that a trace has no browser main thread (any trace
// not from Chrome): the context is made here as its constructor makes it,
// with that stub added, and the warnings printed.
function timeline(file) {
	const dir = path.dirname(require.resolve('devtools-timeline-model'));
	const ctx = vm.createContext({ require, global, console, __dirname: dir });
	new vm.Script(fs.readFileSync(dir + '/lib/timeline-model.js', 'utf8'))
		.runInContext(ctx);
	ctx.Common.console = {
		error: (m) => console.log('warning: ' + m),
		warn: (m) => console.log('warning: ' + m),
		log: () => {},
	};
	const m = ctx.sandboxedModel.init(fs.readFileSync(file, 'utf8'));
	let procs = 0, threads = 0, events = 0, slices = 0;
	for (const p of m.tracingModel().sortedProcesses()) {
		procs += !!p.name();
		for (const t of p.sortedThreads()) {
			threads += !!t.name();
			events += t.events().length;
			slices += t.events().filter((e) => e.phase === 'X').length;
		}
	}
	console.log('named processes', procs);
	console.log('named threads', threads);
	console.log('events', events);
	console.log('slices', slices);
}

async function engine(file) {
	const { analyzeTrace } = await import(
		require.resolve('@paulirish/trace_engine/analyze-trace.mjs'));
	const { parsedTrace } = await analyzeTrace(file);
	const d = parsedTrace.data;
	let threads = 0, entries = 0;
	for (const p of d.Renderer.processes.values())
		for (const t of p.threads.values()) {
			threads++;
			entries += t.entries.length;
		}
	console.log('processes', d.Renderer.processes.size);
	console.log('threads', threads);
	console.log('entries', entries);
	console.log('first', d.Meta.traceBounds.min.toFixed(3));
	console.log('warnings', d.Warnings.perWarning.size);
}

const [cmd, arg] = process.argv.slice(2);
try {
	if (cmd === 'duckdb')
		await duckdb(arg);
	else if (cmd === 'timeline')
		timeline(arg);
	else if (cmd === 'engine')
		await engine(arg);
	else
		throw new Error('usage: export3p.mjs duckdb|timeline|engine FILE');
} catch (e) {
	console.log('error: ' + (e.stack || e));
	process.exit(1);
}
