// Time: < 1 s (pure arithmetic on a fake clock)
/** The pacer's arithmetic (nodes/shared/transport/pacer.ts), on a fake clock and a fake sleep. */
import { Pacer } from '../../nodes/shared/transport/pacer';

function fakeTime() {
	let now = 1_000_000;
	return {
		clock: () => now,
		advance: (ms: number) => {
			now += ms;
		},
		/** A sleep that moves the fake clock (and records how long each wait was). */
		sleeps: [] as number[],
		get now() {
			return now;
		},
	};
}

function pacerWithSleep() {
	const time = fakeTime();
	const pacer = new Pacer(time.clock);
	const sleep = async (ms: number) => {
		time.sleeps.push(ms);
		time.advance(ms);
		await Promise.resolve();
	};
	return { time, pacer, sleep };
}

describe('pacer', () => {
	it('paces nothing until the first 429', async () => {
		const { time, pacer, sleep } = pacerWithSleep();
		for (let i = 0; i < 50; i++) await pacer.acquire(sleep, 'submit');
		expect(time.sleeps).toEqual([]);
		expect(pacer.rate).toBe(Infinity);
	});

	it('a 429 blocks every request for its wait and sets the rate to 90% of what the service accepted', async () => {
		const { time, pacer, sleep } = pacerWithSleep();
		// 20 accepted answers within the first second, then a 429: 20 a second over the 1 s floor of the window.
		for (let i = 0; i < 20; i++) {
			await pacer.acquire(sleep, 'submit');
			pacer.onAccepted();
			time.advance(10);
		}
		pacer.onLimited(1000);
		expect(pacer.rate).toBeCloseTo(20 * 0.9, 5);
		const limitedAt = time.now;
		// The next request of any kind waits out the Retry-After, then the turns are 1/rate apart.
		await pacer.acquire(sleep, 'poll');
		expect(time.now).toBe(limitedAt + 1000);
		await pacer.acquire(sleep, 'poll');
		expect(time.now - (limitedAt + 1000)).toBeCloseTo(1000 / pacer.rate, 0);
	});

	it('429s answered during the same wait lower the rate once (multiplicative decrease per wait)', () => {
		const { time, pacer } = pacerWithSleep();
		for (let i = 0; i < 10; i++) pacer.onAccepted();
		pacer.onLimited(1000);
		const first = pacer.rate;
		time.advance(5);
		pacer.onLimited(1000);
		pacer.onLimited(1000);
		expect(pacer.rate).toBe(first);
		expect(pacer.stats).toMatchObject({ limited: 3, decreases: 1 });
	});

	it('recovers additively: +0.01 requests/s per accepted answer', () => {
		const { pacer } = pacerWithSleep();
		for (let i = 0; i < 5; i++) pacer.onAccepted();
		pacer.onLimited(1000);
		const lowered = pacer.rate;
		for (let i = 0; i < 100; i++) pacer.onAccepted();
		expect(pacer.rate).toBeCloseTo(lowered + 1, 5);
	});

	it('a run that sends little is paced at 0.9 requests/s after a 429, and never below 0.2 requests/s', () => {
		const { time, pacer } = pacerWithSleep();
		pacer.onLimited(1000);
		// Nothing accepted yet (counted as 1 a second): 0.9 requests/s.
		expect(pacer.rate).toBeCloseTo(0.9, 5);
		for (let i = 0; i < 40; i++) {
			time.advance(5000);
			pacer.onLimited(1000);
		}
		expect(pacer.rate).toBeCloseTo(0.2, 5);
	});

	it('grants turns by priority: a retry, then finishing a task, then submissions, then polls', async () => {
		const { time, pacer, sleep } = pacerWithSleep();
		pacer.onAccepted();
		pacer.onLimited(1000);
		const order: string[] = [];
		const waits = (['poll', 'submit', 'poll', 'finish', 'retry', 'submit'] as const).map((cls, i) =>
			pacer.acquire(sleep, cls).then(() => order.push(`${cls}${i}`)),
		);
		await Promise.all(waits);
		expect(order).toEqual(['retry4', 'finish3', 'submit1', 'submit5', 'poll0', 'poll2']);
		expect(time.sleeps[0]).toBe(1000);
	});

	it('a turn taken before a 429 does not hold after it', () => {
		const { time, pacer } = pacerWithSleep();
		const before = time.now;
		time.advance(1);
		expect(pacer.turnHolds(before)).toBe(true);
		pacer.onLimited(1000);
		expect(pacer.turnHolds(before)).toBe(false);
		time.advance(1);
		expect(pacer.turnHolds(time.now)).toBe(true);
	});

	it('a cancelled wait ends every waiting request with the same error', async () => {
		const time = fakeTime();
		const pacer = new Pacer(time.clock);
		pacer.onLimited(1000);
		const cancelled = new Error('cancelled');
		const sleep = async () => {
			throw cancelled;
		};
		const results = await Promise.allSettled([pacer.acquire(sleep, 'poll'), pacer.acquire(sleep, 'submit')]);
		expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
		expect(pacer.idle).toBe(true);
	});

	it('spreads the second polls of tasks over a whole interval (0.5–1.5 of it)', () => {
		const { pacer } = pacerWithSleep();
		const phases = Array.from({ length: 20 }, () => pacer.nextPollPhase());
		expect(Math.min(...phases)).toBeGreaterThanOrEqual(0.5);
		expect(Math.max(...phases)).toBeLessThan(1.5);
		// Ten tasks submitted together: no two of them poll within 5% of an interval of each other.
		const ten = phases.slice(0, 10).sort((a, b) => a - b);
		const gaps = ten.slice(1).map((p, i) => p - ten[i]);
		expect(Math.min(...gaps)).toBeGreaterThan(0.05);
	});
});
