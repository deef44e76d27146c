/** The mock's mutable state, and `reset` back to the start-up defaults. */
import { randomBytes } from 'crypto';
import { NO_LIMITS, RateLimiter, type MockLimits } from './limits';
import { DEFAULT_TASK_SCRIPT, type MockState, type Personality, type TaskScript } from './types';

export function createState(
	defaults: Partial<TaskScript> = {},
	limits: Partial<MockLimits> = {},
	personality: Personality = 'default',
): MockState {
	const startLimits: MockLimits = { ...NO_LIMITS, ...limits };
	const script = { ...DEFAULT_TASK_SCRIPT, ...defaults };
	return {
		log: [],
		tasks: new Map(),
		images: new Map(),
		faults: [],
		script: { ...script },
		defaults: script,
		submissions: 0,
		seq: 0,
		baseUrl: '',
		limits: { ...startLimits },
		defaultLimits: startLimits,
		limiter: new RateLimiter(),
		keyStats: new Map(),
		personality,
		accessSecret: randomBytes(16).toString('hex'),
	};
}

export function resetState(state: MockState): void {
	state.log = [];
	state.tasks.clear();
	state.images.clear();
	state.faults = [];
	state.script = { ...state.defaults };
	state.submissions = 0;
	state.seq = 0;
	state.limits = { ...state.defaultLimits };
	state.limiter.clear();
	state.keyStats.clear();
}
