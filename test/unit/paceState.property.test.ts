// The pace a credential's state learns (nodes/shared/transport/paceState.ts), against a generated hostile service:
// any mix of accepted answers and 429s with any Retry-After (none up to an hour), for turns granted just now, long
// ago, in the future or unknown, at any clock step. Whatever it is told, the state never throws, its pace is either
// unpaced or a finite rate of at least minRate, and the wait for the next turn is never longer than the longest
// Retry-After it was given or one turn at minRate: a run waits only as long as the service said, and so ends within
// its Timeout. (Found by a helper's attack before it was a test: a spread over thousands of answers overflowed the
// stack.)
import fc from 'fast-check';

import { DEFAULT_PACER_TUNING, PaceState } from '../../nodes/shared/transport/paceState';

/** When the answered request had its turn: the last granted, one of the last few, long ago, just ahead, or unknown. */
type Granted = { kind: 'last' } | { kind: 'recent'; back: number } | { kind: 'past'; ms: number } | { kind: 'ahead'; ms: number } | { kind: 'unknown' };
type Step =
	| { op: 'advance'; ms: number }
	| { op: 'grant' }
	| { op: 'accepted'; granted: Granted }
	| { op: 'limited'; waitMs: number; granted: Granted }
	| { op: 'settle' };

const granted: fc.Arbitrary<Granted> = fc.oneof(
	fc.constant<Granted>({ kind: 'last' }),
	fc.integer({ min: 0, max: 5 }).map((back): Granted => ({ kind: 'recent', back })),
	fc.integer({ min: 0, max: 200_000 }).map((ms): Granted => ({ kind: 'past', ms })),
	fc.integer({ min: 1, max: 5 }).map((ms): Granted => ({ kind: 'ahead', ms })),
	fc.constant<Granted>({ kind: 'unknown' }),
);
const step: fc.Arbitrary<Step> = fc.oneof(
	{ weight: 4, arbitrary: fc.oneof(fc.constantFrom(0, 1, 50, 333, 1000, 3000, 90_000), fc.nat(10_000)).map((ms): Step => ({ op: 'advance', ms })) },
	{ weight: 4, arbitrary: fc.constant<Step>({ op: 'grant' }) },
	{ weight: 5, arbitrary: granted.map((at): Step => ({ op: 'accepted', granted: at })) },
	{ weight: 3, arbitrary: fc.record({ waitMs: fc.constantFrom(0, 1, 1000, 2000, 3_600_000), granted }).map((limited): Step => ({ op: 'limited', ...limited })) },
	{ weight: 1, arbitrary: fc.constant<Step>({ op: 'settle' }) },
);

/** Plays the steps; returns what broke the rule first, or undefined. */
function play(steps: Step[], state = new PaceState()): string | undefined {
	let now = 1_000_000;
	let longestWait = 0;
	const grants: number[] = [];
	const at = (g: Granted): number | undefined => {
		const last = grants.length > 0 ? grants[grants.length - 1] : now;
		if (g.kind === 'last') return last;
		if (g.kind === 'recent') return grants.length > 0 ? grants[Math.max(0, grants.length - 1 - g.back)] : now;
		if (g.kind === 'past') return now - g.ms;
		if (g.kind === 'ahead') return now + g.ms;
		return undefined;
	};
	for (const [index, s] of steps.entries()) {
		if (s.op === 'advance') now += s.ms;
		else if (s.op === 'grant') {
			state.settle(now);
			if (state.waitMs(now) <= 0) {
				state.take(now);
				grants.push(now);
			}
		} else if (s.op === 'accepted') state.onAccepted(now, at(s.granted));
		else if (s.op === 'limited') {
			longestWait = Math.max(longestWait, s.waitMs);
			state.onLimited(now, s.waitMs, at(s.granted));
		} else state.settle(now);
		const rate = state.rate;
		if (!(rate === Infinity || (Number.isFinite(rate) && rate >= DEFAULT_PACER_TUNING.minRate))) return `step ${index}: rate ${rate}`;
		const wait = state.waitMs(now);
		const bound = Math.max(longestWait, 1000 / DEFAULT_PACER_TUNING.minRate) + 1e-6;
		if (!(wait <= bound)) return `step ${index}: the next turn in ${wait} ms, over ${bound}`;
	}
	return undefined;
}

it('whatever the service answers, the pace stays a rate of at least minRate and no turn waits longer than it was told', () => {
	fc.assert(
		fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
			expect(play(steps)).toBeUndefined();
		}),
		{ numRuns: 1000 },
	);
});

it('control: the rule can fail (a pace under minRate, a turn later than any wait told)', () => {
	class TooSlow extends PaceState {
		onLimited(now: number, waitMs: number, grantedAt?: number): boolean {
			const result = super.onLimited(now, waitMs, grantedAt);
			this.rate = DEFAULT_PACER_TUNING.minRate / 2;
			return result;
		}
	}
	class Stuck extends PaceState {
		waitMs(): number {
			return 3_600_001;
		}
	}
	const limited: Step = { op: 'limited', waitMs: 1000, granted: { kind: 'unknown' } };
	expect(play([limited])).toBeUndefined();
	expect(play([limited], new TooSlow())).toMatch(/^step 0: rate /);
	expect(play([{ op: 'advance', ms: 1 }], new Stuck())).toMatch(/^step 0: the next turn in 3600001 ms, over 5000/);
});
