/** The mock's mutable state, and `reset` back to the start-up defaults. */
import { DEFAULT_TASK_SCRIPT, type MockState, type TaskScript } from './types';

export function createState(defaults: Partial<TaskScript> = {}): MockState {
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
}
