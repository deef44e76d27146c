/**
 * `npm run mock`: the mock service as a standalone process.
 * Env: PORT (default 4010; 0 = random), MOCK_HOST, MOCK_API_KEY, MOCK_SECONDARY_KEYS (JSON), MOCK_DEFAULTS (JSON task
 * script), MOCK_RATE_LIMIT (requests/s per key), MOCK_LIMITER (its kind, limits.ts LIMITER_KINDS), MOCK_TASK_SECONDS (e.g. `50-70`), MOCK_READ_FAULT_RATE (0..1),
 * MOCK_FETCH_MEDIA (`off`: never fetch submitted frame/reference URLs; default `loopback`) (see limits.ts),
 * MOCK_PERSONALITY (`new-api`: answer as the gateway new-api does; see README.md), MOCK_EXIT_WITH_STDIN=1 (exit when
 * stdin closes: set by process.ts so a dead parent never leaves us behind).
 * First stdout line: `{"url":...,"apiKey":...}`; then a human-readable hint.
 */
import { limitsFromEnv } from './limits';
import { startMockService, type Personality } from './server';

function jsonEnv<T>(name: string): T | undefined {
	const raw = process.env[name];
	if (!raw) return undefined;
	try {
		return JSON.parse(raw) as T;
	} catch {
		process.stderr.write(`mock: ignoring ${name}: not valid JSON\n`);
		return undefined;
	}
}

/** MOCK_PERSONALITY: `new-api`, or anything else/unset for the default wire. */
function personalityEnv(): Personality {
	const raw = (process.env.MOCK_PERSONALITY ?? '').trim().toLowerCase();
	if (raw === 'new-api' || raw === 'newapi') return 'new-api';
	if (raw !== '' && raw !== 'default') process.stderr.write(`mock: unknown MOCK_PERSONALITY '${raw}'; using default\n`);
	return 'default';
}

async function main(): Promise<void> {
	// A reader that stopped listening (e.g. `| head -1`) must not crash the mock.
	process.stdout.on('error', () => undefined);
	const port = process.env.PORT !== undefined && process.env.PORT !== '' ? Number(process.env.PORT) : 4010;
	const mock = await startMockService({
		port,
		host: process.env.MOCK_HOST || undefined,
		apiKey: process.env.MOCK_API_KEY || undefined,
		secondaryKeys: jsonEnv('MOCK_SECONDARY_KEYS'),
		defaults: jsonEnv('MOCK_DEFAULTS'),
		limits: limitsFromEnv(process.env),
		personality: personalityEnv(),
	});
	process.stdout.write(`${JSON.stringify({ url: mock.url, apiKey: mock.apiKey })}\n`);
	process.stdout.write(
		[
			`Gen Gateway mock listening on ${mock.url}${mock.state.personality === 'new-api' ? ' (speaking as new-api)' : ''}`,
			`  In n8n, create a "Gen Gateway API" credential with Base URL ${mock.url} and the API key above.`,
			'  Video prompt markers: [[new-api]] [[fail]] [[fail=reason]] [[never]] [[slow]] [[instant]] [[size=64M]] [[runMs=2000]] [[ttlMs=500]] (see test/mock/README.md)',
			`  Admin: GET ${mock.url}/__mock/log, POST ${mock.url}/__mock/reset, POST ${mock.url}/__mock/faults`,
			'  Ctrl+C to stop.',
			'',
		].join('\n'),
	);

	let stopping = false;
	const stop = () => {
		if (stopping) return;
		stopping = true;
		void mock.close().then(() => process.exit(0));
		// Never hang on shutdown.
		setTimeout(() => process.exit(0), 2000).unref();
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
	if (process.env.MOCK_EXIT_WITH_STDIN === '1') {
		process.stdin.on('end', stop);
		process.stdin.on('close', stop);
		process.stdin.resume();
	}
}

main().catch((err: Error) => {
	process.stderr.write(`mock: failed to start: ${err.message}\n`);
	process.exit(1);
});
