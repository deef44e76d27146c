import { createGate } from '../../nodes/shared/run/concurrency';
import { ENTRY_TTL_MS, guardSize, recall, remember } from '../../nodes/shared/run/guardMemory';
import { forgetScope, guardKey } from '../../nodes/shared/run/submissionGuard';

describe('submission guard', () => {
	const scope = { executionId: 'e1', nodeName: 'Video', runIndex: 0 };

	it('keys by execution, node, run, item and call, never by the body (a body may hold {{ $now }})', () => {
		const call = 'POST /v1/tasks/vendor';
		const key = guardKey(scope, 0, call);
		expect(guardKey(scope, 0, call)).toBe(key);
		expect(guardKey(scope, 1, call)).not.toBe(key);
		expect(guardKey(scope, 0, 'POST /v1/chat/completions #2')).not.toBe(key);
		expect(guardKey({ ...scope, executionId: 'e2' }, 0, call)).not.toBe(key);
		expect(guardKey({ ...scope, nodeName: 'Other' }, 0, call)).not.toBe(key);
		// A new run of the node (a loop's next batch) is not a retry of the earlier one.
		expect(guardKey({ ...scope, runIndex: 1 }, 0, call)).not.toBe(key);
	});

	it('remembers, forgets a finished node, and expires old entries', () => {
		const before = guardSize();
		const key = guardKey(scope, 0, 'POST /v1/tasks/vendor');
		remember(key, { state: 'accepted', value: 't1', at: Date.now() });
		remember(guardKey({ ...scope, executionId: 'other' }, 0, 'POST /v1/tasks/vendor'), { state: 'unknown', error: { message: 'r' }, at: 0 });
		expect(recall(key)).toMatchObject({ value: 't1' });
		forgetScope(scope);
		expect(recall(key)).toBeUndefined();
		// The entry of the other execution was stamped at 0: it has expired by now.
		expect(recall('anything', ENTRY_TTL_MS + 1)).toBeUndefined();
		expect(guardSize()).toBe(before);
	});
});

describe('createGate', () => {
	it('never runs more than the limit at once and lets every call through', async () => {
		const gate = createGate(3);
		let running = 0;
		let peak = 0;
		const results = await Promise.all(
			Array.from({ length: 10 }, (_, i) =>
				gate(async () => {
					running++;
					peak = Math.max(peak, running);
					await new Promise((r) => setTimeout(r, (10 - i) * 3));
					running--;
					return i * 2;
				}),
			),
		);
		expect(results).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
		expect(peak).toBe(3);
	});

	it('frees its slot when a call fails', async () => {
		const gate = createGate(1);
		await expect(gate(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
		await expect(gate(async () => 'next')).resolves.toBe('next');
	});

	it('waits outside the gate overlap: 6 calls of 100 ms through a gate of 6 take far less than 600 ms', async () => {
		const gate = createGate(6);
		const started = Date.now();
		await Promise.all(Array.from({ length: 6 }, () => gate(async () => await new Promise((r) => setTimeout(r, 100)))));
		expect(Date.now() - started).toBeLessThan(400);
	});
});
