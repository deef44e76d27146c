/**
 * The submission guard's memory is bounded (issue 37, point 8): failed runs once kept whole answers (an Image answer's
 * base64 included) for an hour and swept only when a later paid request looked something up. Now every write sweeps;
 * the runs that ended where a retry may come are bounded in bytes (their large answers become `dropped`: still never
 * sent again) and count (their oldest runs go), and expire an hour after they ended. A run still going is never
 * touched (an adversarial review found that evicting its entries paid a batch of 10,050 rows twice), and small
 * entries (a video's task id) are never slimmed.
 */
import {
	approxBytes,
	endedGuardBytes,
	endScope,
	ENTRY_TTL_MS,
	forgetScope,
	guardSize,
	keptError,
	LIVE_TTL_MS,
	MAX_ENTRIES,
	MAX_KEPT_BYTES,
	recall,
	remember,
} from '../../nodes/shared/run/guardMemory';

const MB = 1024 * 1024;
const answer = (mb: number) => ({ data: [{ b64_json: 'A'.repeat(mb * MB) }] });
const runs: string[] = [];
const run = (name: string) => {
	runs.push(`t/${name}`);
	return `t/${name}`;
};

afterEach(() => {
	for (const name of runs.splice(0)) forgetScope(name);
});

describe('the guard memory', () => {
	it('counts about the bytes a value holds, without copying it', () => {
		expect(approxBytes('abc')).toBe(3);
		expect(approxBytes(Buffer.alloc(1000))).toBe(1000);
		expect(approxBytes(answer(2))).toBeGreaterThanOrEqual(2 * MB);
		expect(approxBytes(answer(2))).toBeLessThan(2 * MB + 100);
	});

	it('keeps of an error only its message and details (no stack, no request, no socket)', () => {
		const error = Object.assign(new Error('socket hang up'), {
			context: { task_id: 't1' },
			request: { socket: { big: 'x'.repeat(MB) } },
			config: { headers: { Authorization: 'Bearer sk-secret' } },
		});
		expect(keptError(error)).toEqual({ message: 'socket hang up', context: { task_id: 't1' } });
	});

	it('over the byte bound, the oldest ended runs\' large answers are dropped (never forgotten), small entries kept', () => {
		const count = Math.ceil(MAX_KEPT_BYTES / (8 * MB)) + 2;
		const video = run('video');
		remember(video, '0', { state: 'accepted', value: { taskId: 'task_1', sent: { prompt: 'a fox' } }, at: Date.now() });
		endScope(video);
		for (let i = 0; i < count; i++) {
			const image = run(`image${i}`);
			remember(image, '0', { state: 'accepted', value: answer(8), at: Date.now() });
			endScope(image);
		}
		expect(endedGuardBytes()).toBeLessThanOrEqual(MAX_KEPT_BYTES);
		expect(recall('t/image0', '0')?.state).toBe('dropped');
		expect(recall(`t/image${count - 1}`, '0')?.state).toBe('accepted');
		// A video's task id is small: kept whole, older as it is.
		expect(recall(video, '0')).toMatchObject({ state: 'accepted', value: { taskId: 'task_1' } });
	});

	it('a run still going is never slimmed or evicted, whatever the others hold', () => {
		const live = run('live');
		for (let i = 0; i < 20; i++) remember(live, String(i), { state: 'accepted', value: answer(4), at: Date.now() });
		const ended = run('ended');
		remember(ended, '0', { state: 'accepted', value: answer(80), at: Date.now() });
		endScope(ended);
		for (let i = 0; i < 20; i++) expect(recall(live, String(i))?.state).toBe('accepted');
		expect(recall(ended, '0')?.state).toBe('dropped');
	});

	it('over the byte bound, an unknown outcome keeps its message and small details, its long text goes', () => {
		const broken = run('broken');
		const partialContent = 'p'.repeat(40 * MB);
		remember(broken, '0', { state: 'unknown', error: { message: 'broken', context: { partialContent, task_id: 'x' } }, at: Date.now() });
		endScope(broken);
		const big = run('big');
		remember(big, '0', { state: 'accepted', value: answer(40), at: Date.now() });
		endScope(big);
		const kept = recall(broken, '0');
		expect(kept).toMatchObject({ state: 'unknown', error: { message: 'broken', context: { task_id: 'x' } } });
		expect(kept?.state === 'unknown' && kept.error.context?.partialContent).toBeFalsy();
		expect(endedGuardBytes()).toBeLessThanOrEqual(MAX_KEPT_BYTES);
	});

	it('over the count bound, the oldest ended runs go whole; a run still going keeps every entry', () => {
		const live = run('live-many');
		for (let i = 0; i < MAX_ENTRIES + 10; i++) remember(live, String(i), { state: 'sending', at: Date.now() });
		const first = run('first');
		remember(first, '0', { state: 'unknown', error: { message: 'r' }, at: Date.now() });
		endScope(first);
		expect(recall(live, '0')).toBeDefined();
		const bulk = run('bulk');
		for (let i = 0; i < MAX_ENTRIES; i++) remember(bulk, String(i), { state: 'sending', at: Date.now() });
		endScope(bulk);
		expect(recall(first, '0')).toBeUndefined();
		expect(recall(live, '0')).toBeDefined();
		expect(recall(live, String(MAX_ENTRIES + 9))).toBeDefined();
	});

	it('a failed run expires an hour after it ended, swept by any write; a run never ended after LIVE_TTL_MS', () => {
		jest.useFakeTimers({ now: Date.now() });
		try {
			const failed = run('failed');
			remember(failed, '0', { state: 'accepted', value: answer(1), at: Date.now() });
			const longRun = run('long');
			remember(longRun, '0', { state: 'sending', at: Date.now() });
			// The failed run lasted two hours before it ended: its entries count from its end.
			jest.setSystemTime(Date.now() + 2 * ENTRY_TTL_MS);
			endScope(failed);
			expect(recall(failed, '0')?.state).toBe('accepted');
			const before = guardSize();
			jest.setSystemTime(Date.now() + ENTRY_TTL_MS + 1);
			remember(run('other'), '0', { state: 'sending', at: Date.now() });
			expect(guardSize()).toBe(before);
			expect(recall(failed, '0')).toBeUndefined();
			expect(recall(longRun, '0')).toBeDefined();
			jest.setSystemTime(Date.now() + LIVE_TTL_MS);
			expect(recall(longRun, '0')).toBeUndefined();
		} finally {
			jest.useRealTimers();
		}
	});
});
