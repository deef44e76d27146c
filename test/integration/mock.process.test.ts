/** The mock as a process: start-up line, clean stop, no orphan, and flat memory while streaming 64 MB. */
import { spawn } from 'child_process';
import { createHash } from 'crypto';
import { once } from 'events';
import { request } from 'http';
import * as path from 'path';
import { createInterface } from 'readline';
import { spawnMockProcess } from '../mock/process';

const ROOT = path.join(__dirname, '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startCli(env: Record<string, string>) {
	const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'test/mock/cli.ts'], {
		cwd: ROOT,
		env: { ...process.env, ...env },
		stdio: ['pipe', 'pipe', 'pipe'],
	});
	const lines: string[] = [];
	createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
	return { child, lines };
}

async function waitFor<T>(get: () => T | undefined, timeoutMs = 15_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = get();
		if (value !== undefined) return value;
		if (Date.now() > deadline) throw new Error('timed out');
		await sleep(20);
	}
}

it('cli prints one JSON line first, then a hint, honours env options, and stops cleanly on SIGINT', async () => {
	const { child, lines } = startCli({
		PORT: '0',
		MOCK_API_KEY: 'cli-test-key-000',
		MOCK_DEFAULTS: JSON.stringify({ runMs: 1234 }),
	});
	await waitFor(() => (lines.length >= 2 ? true : undefined));
	const first = JSON.parse(lines[0]);
	expect(first).toEqual({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), apiKey: 'cli-test-key-000' });
	expect(lines[1]).toContain(first.url);
	const script = (await (await fetch(`${first.url}/__mock/task-script`)).json()) as { runMs: number };
	expect(script.runMs).toBe(1234);
	const ok = await fetch(`${first.url}/v1/models`, { headers: { Authorization: 'Bearer cli-test-key-000' } });
	expect(ok.status).toBe(200);
	child.kill('SIGINT');
	const [code] = await once(child, 'exit');
	expect(code).toBe(0);
});

it('the child exits when its parent goes away (stdin closes)', async () => {
	const { child, lines } = startCli({ PORT: '0', MOCK_EXIT_WITH_STDIN: '1' });
	await waitFor(() => lines[0]);
	const exited = once(child, 'exit');
	child.stdin.end();
	const [code] = await exited;
	expect(code).toBe(0);
});

it('spawnMockProcess: stop() ends the child and the port stops answering', async () => {
	const mock = await spawnMockProcess({ apiKey: 'spawned-key-123456' });
	expect(mock.apiKey).toBe('spawned-key-123456');
	const { pid } = await mock.health();
	expect(pid).not.toBe(process.pid);
	await mock.stop();
	await expect(fetch(`${mock.url}/v1/models`)).rejects.toThrow();
});

it('streams a 64 MB artifact without growing the mock process memory much', async () => {
	const mock = await spawnMockProcess();
	try {
		const auth = { Authorization: `Bearer ${mock.apiKey}` };
		const submitted = await fetch(`${mock.url}/v1/tasks/vendor`, {
			method: 'POST',
			headers: { ...auth, 'Content-Type': 'application/json' },
			body: JSON.stringify({ model: 'gk_video', prompt: 'big [[instant]] [[size=64M]]' }),
		});
		const { task_id: id } = (await submitted.json()) as { task_id: string };
		const before = (await mock.health()).rss;
		let peak = before;
		let downloading = true;
		const sampler = (async () => {
			while (downloading) {
				peak = Math.max(peak, (await mock.health()).rss);
				await sleep(30);
			}
		})();
		const hash = createHash('sha256');
		let bytes = 0;
		await new Promise<void>((resolve, reject) => {
			request(`${mock.url}/v1/tasks/${id}/artifacts/video/content`, { headers: auth }, (res) => {
				res.on('data', (c: Buffer) => {
					bytes += c.length;
					hash.update(c);
				});
				res.on('end', resolve);
				res.on('error', reject);
			})
				.on('error', reject)
				.end();
		});
		downloading = false;
		await sampler;
		expect(bytes).toBe(64 * 1024 * 1024);
		expect(await mock.artifactSha256(id)).toBe(hash.digest('hex'));
		expect(peak - before).toBeLessThan(16 * 1024 * 1024);
	} finally {
		await mock.stop();
	}
});
