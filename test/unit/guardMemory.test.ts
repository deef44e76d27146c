/**
 * The submission guard's memory is bounded (issue 37, point 8): failed runs once kept whole answers (an Image answer's
 * base64 included) for an hour and swept only when a later paid request looked something up. Now every write sweeps,
 * the bytes and the count have a bound, an accepted answer over the bound becomes `dropped` (still never sent
 * again), and an unknown outcome keeps only its message and details, never the error object.
 */
import {
	approxBytes,
	ENTRY_TTL_MS,
	forgetPrefix,
	guardBytes,
	guardSize,
	keptError,
	MAX_ENTRIES,
	MAX_KEPT_BYTES,
	recall,
	remember,
} from '../../nodes/shared/run/guardMemory';

const MB = 1024 * 1024;
const answer = (mb: number) => ({ data: [{ b64_json: 'A'.repeat(mb * MB) }] });

afterEach(() => forgetPrefix('t/'));

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

	it('over the byte bound, the oldest accepted answers are dropped (never forgotten), the newest kept', () => {
		const count = Math.ceil(MAX_KEPT_BYTES / (8 * MB)) + 2;
		for (let i = 0; i < count; i++) remember(`t/${i}`, { state: 'accepted', value: answer(8), at: Date.now() });
		expect(guardBytes()).toBeLessThanOrEqual(MAX_KEPT_BYTES);
		expect(recall('t/0')?.state).toBe('dropped');
		expect(recall(`t/${count - 1}`)?.state).toBe('accepted');
		expect(guardSize()).toBeGreaterThanOrEqual(count);
	});

	it('over the byte bound, an unknown outcome keeps its message and small details, its long text goes', () => {
		const partialContent = 'p'.repeat(40 * MB);
		remember('t/unknown', { state: 'unknown', error: { message: 'broken', context: { partialContent, task_id: 'x' } }, at: Date.now() });
		remember('t/big', { state: 'accepted', value: answer(40), at: Date.now() });
		const kept = recall('t/unknown');
		expect(kept).toMatchObject({ state: 'unknown', error: { message: 'broken', context: { task_id: 'x' } } });
		expect(kept?.state === 'unknown' && kept.error.context?.partialContent).toBeFalsy();
		expect(guardBytes()).toBeLessThanOrEqual(MAX_KEPT_BYTES);
	});

	it('over the count bound, the oldest entries go', () => {
		for (let i = 0; i <= MAX_ENTRIES; i++) remember(`t/n${i}`, { state: 'sending', at: Date.now() });
		expect(guardSize()).toBeLessThanOrEqual(MAX_ENTRIES);
		expect(recall('t/n0')).toBeUndefined();
		expect(recall(`t/n${MAX_ENTRIES}`)).toBeDefined();
	});

	it('every write sweeps what has expired, not only a lookup', () => {
		jest.useFakeTimers({ now: Date.now() });
		try {
			remember('t/old', { state: 'accepted', value: answer(1), at: Date.now() });
			const before = guardBytes();
			jest.setSystemTime(Date.now() + ENTRY_TTL_MS + 1);
			remember('t/new', { state: 'sending', at: Date.now() });
			expect(guardBytes()).toBeLessThanOrEqual(before - MB);
			expect(guardSize()).toBe(1);
		} finally {
			jest.useRealTimers();
		}
	});
});
