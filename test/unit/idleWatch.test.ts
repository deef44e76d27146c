/** The idle watch behind the Chat Timeout for streams: fires once after a silence, never while touched, never after stop. */
import { idleWatch } from '../../nodes/shared/transport/idleWatch';

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
