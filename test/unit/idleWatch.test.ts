/**
 * The idle watch behind the Chat Timeout for streams: fires once after a silence, never while touched, never after stop;
 * and by its total bound however lively the stream (issue 51, 6).
 */
import { boundRanOut, idleWatch } from '../../nodes/shared/transport/idleWatch';
import { abortableSleep } from '../../nodes/shared/transport/wait';

const pause = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

describe('idleWatch', () => {
	it('fires once after idleMs without a touch', async () => {
		let calls = 0;
		const watch = idleWatch(100, () => calls++);
		await pause(60);
		expect(watch.fired).toBe(false);
		await pause(120);
		expect(watch.fired).toBe(true);
		expect(calls).toBe(1);
		expect(watch.silentMs()).toBeGreaterThanOrEqual(100);
		watch.stop();
	});

	it('does not fire while touched more often than idleMs, however long it runs', async () => {
		// Touched every 50 ms (well under the 400 ms limit, even on a busy machine) for longer than the limit.
		const watch = idleWatch(400, () => undefined);
		for (let i = 0; i < 12; i++) {
			await pause(50);
			watch.touch();
		}
		expect(watch.fired).toBe(false);
		expect(watch.silentMs()).toBeLessThan(400);
		watch.stop();
	});

	it('never fires after stop', async () => {
		const watch = idleWatch(50, () => {
			throw new Error('fired after stop');
		});
		watch.stop();
		await pause(120);
		expect(watch.fired).toBe(false);
	});
});

describe('idleWatch: the total bound (issue 51, 6)', () => {
	it('fires by its total bound however often it is touched, and says which bound ran out', async () => {
		// Touched every 20 ms: the idle bound (10 s) never runs out; only the total (150 ms) can end it.
		let calls = 0;
		const watch = idleWatch(10_000, () => calls++, 150);
		for (let i = 0; i < 200 && !watch.fired; i++) {
			await pause(20);
			watch.touch();
		}
		expect(watch.ranOut).toBe('total');
		expect(calls).toBe(1);
		watch.stop();
	});

	it('a silence ends it as before, named idle', async () => {
		const watch = idleWatch(50, () => undefined, 60_000);
		await pause(150);
		expect(watch.ranOut).toBe('idle');
		expect(boundRanOut(watch, 50)).toBe('idle');
		watch.stop();
	});

	it('boundRanOut: silence as long as the idle bound counts as idle before the watch wakes (the socket may be first)', () => {
		const watch = idleWatch(60_000, () => undefined);
		expect(boundRanOut(watch, 60_000)).toBeUndefined();
		expect(boundRanOut(watch, 100)).toBe('idle');
		expect(boundRanOut(undefined, 100)).toBeUndefined();
		watch.stop();
	});
});

describe('abortableSleep past the range of one timer', () => {
	it('a wait longer than 2^31-1 ms does not end at once (Node would fire such a timer after 1 ms)', async () => {
		const stopper = new AbortController();
		let ended: 'resolved' | 'rejected' | undefined;
		const sleeping = abortableSleep(2 ** 31 + 1000, stopper.signal).then(
			() => (ended = 'resolved'),
			() => (ended = 'rejected'),
		);
		await pause(100);
		expect(ended).toBeUndefined();
		stopper.abort();
		await sleeping;
		expect(ended).toBe('rejected');
	});
});
