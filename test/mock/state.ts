/** The mock's mutable state, and `reset` back to the start-up defaults. */
import { NO_LIMITS, RateLimiter, type MockLimits } from './limits';
import { DEFAULT_TASK_SCRIPT, type MockState, type TaskScript } from './types';

export function createState(defaults: Partial<TaskScript> = {}, limits: Partial<MockLimits> = {}): MockState {
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
