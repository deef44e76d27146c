import type { IExecuteFunctions } from 'n8n-workflow';

import { createGate } from '../../nodes/shared/run/concurrency';
import { ENTRY_TTL_MS, endScope, guardSize, recall, remember } from '../../nodes/shared/run/guardMemory';
import { forgetScope, guardScope, guardSlot, runName } from '../../nodes/shared/run/submissionGuard';

describe('submission guard', () => {
	const scope = { executionId: 'e1', nodeName: 'Video', runIndex: 0 };
	const CALL = 'POST /v1/tasks/vendor';
	const same = (a: { run: string; key: string }, b: { run: string; key: string }) => a.run === b.run && a.key === b.key;

	it('keys by execution, node, run, item and call, never by the body (a body may hold {{ $now }})', () => {
		const slot = guardSlot(scope, 0, CALL);
		expect(same(guardSlot(scope, 0, CALL), slot)).toBe(true);
		expect(same(guardSlot(scope, 1, CALL), slot)).toBe(false);
		expect(same(guardSlot(scope, 0, 'POST /v1/chat/completions'), slot)).toBe(false);
		expect(same(guardSlot({ ...scope, executionId: 'e2' }, 0, CALL), slot)).toBe(false);
		expect(same(guardSlot({ ...scope, nodeName: 'Other' }, 0, CALL), slot)).toBe(false);
		// A new run of the node (a loop's next batch) is not a retry of the earlier one.
		expect(same(guardSlot({ ...scope, runIndex: 1 }, 0, CALL), slot)).toBe(false);
	});

	it('remembers, forgets a finished node, and expires a failed run an hour after it ended', () => {
		const before = guardSize();
		const { run, key } = guardSlot(scope, 0, CALL);
		remember(run, key, { state: 'accepted', value: 't1', at: Date.now() });
		const other = runName({ ...scope, executionId: 'other' });
		remember(other, key, { state: 'unknown', error: { message: 'r' }, at: 0 });
		endScope(other, 0);
		expect(recall(run, key)).toMatchObject({ value: 't1' });
		forgetScope(scope);
		expect(recall(run, key)).toBeUndefined();
		// The other run ended at 0: an hour later it has expired.
		expect(recall(other, key, ENTRY_TTL_MS + 1)).toBeUndefined();
		expect(guardSize()).toBe(before);
	});
});

describe('guardScope of a node called as an AI tool', () => {
	const ctx = (extra: object, args: object) =>
		({
			getExecutionId: () => 'e1',
			getNode: () => ({ name: 'Image' }),
			getInputData: () => [{ json: args }],
			getWorkflowDataProxy: () => ({ $runIndex: 7 }),
			parentNode: { name: 'Agent' },
			...extra,
		}) as unknown as IExecuteFunctions;

	it('is known by its agent and its call, not its run index, on n8n 2.x (isToolExecution) and 1.x (connection type)', () => {
		const on2 = guardScope(ctx({ isToolExecution: () => true }, { prompt: 'a fox' }));
		const on1 = guardScope(ctx({ connectionType: 'ai_tool' }, { prompt: 'a fox' }));
		expect(on2).toEqual(on1);
		// Where the agent's run and try cannot be told: one slot for the same arguments (may refuse, never pays twice).
		expect(on2.nodeName.split('\u0000')).toEqual(['Image', 'tool', 'Agent', '', expect.stringMatching(/^[0-9a-f]{16}$/), '0']);
		expect(guardScope(ctx({ connectionType: 'ai_tool' }, { prompt: 'a hare' }))).not.toEqual(on1);
		// Not a tool: the run index, as for any node run.
		expect(guardScope(ctx({ connectionType: 'main' }, { prompt: 'a fox' }))).toEqual({ executionId: 'e1', nodeName: 'Image', runIndex: 7 });
	});

	it("tells calls apart by n8n's arguments object and their place in the agent's try; a retry of either is the same call", () => {
		const agentRun = { node: { name: 'Agent' } };
		const tryOne: unknown[] = [];
		const tryTwo: unknown[] = [];
		const inTry = (closeFunctions: unknown[], args: object) =>
			guardScope(ctx({ isToolExecution: () => true, closeFunctions, getExecuteData: () => agentRun, parentNode: undefined }, args));
		const a = { subject: 'lighthouse' };
		const first = inTry(tryOne, a);
		const second = inTry(tryOne, { subject: 'lighthouse' });
		// Two calls with the same arguments in one try of the agent: two requests.
		expect(second).not.toEqual(first);
		// n8n's Retry On Fail of the tool hands the retry the same arguments object: the same call.
		expect(inTry(tryOne, a)).toEqual(first);
		// The agent's retry (a new try of the same run) asks them in the same order: the same calls.
		expect(inTry(tryTwo, { subject: 'lighthouse' })).toEqual(first);
		expect(inTry(tryTwo, { subject: 'lighthouse' })).toEqual(second);
		// The agent's next run (a loop's next batch): other calls.
		const next = guardScope(ctx({ isToolExecution: () => true, closeFunctions: [], getExecuteData: () => ({ node: { name: 'Agent' } }) }, a));
		expect(next).not.toEqual(first);
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
