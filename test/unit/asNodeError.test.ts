/**
 * asNodeError is what every catch in the nodes re-throws (n8n's `require-node-api-error` rule): node errors and
 * cancellations must come out as the very same object, anything else as a NodeOperationError for the item.
 */
import { ManualExecutionCancelledError, NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { asNodeError, isOutcomeUnknownError, networkError } from '../../nodes/shared/transport/errors';

const node: INode = { id: '1', name: 'Chat', type: 't', typeVersion: 1, position: [0, 0], parameters: {} };
const V1 = require('n8n-workflow-v1') as typeof import('n8n-workflow');

function site(aborted = false) {
	const controller = new AbortController();
	if (aborted) controller.abort();
	return { getNode: () => node, getExecutionCancelSignal: () => controller.signal };
}

describe('asNodeError', () => {
	it('returns NodeApiError and NodeOperationError unchanged, context and all', () => {
		const api = networkError(node, { code: 'ECONNRESET', method: 'POST', path: '/v1/x', outcomeUnknown: true });
		const operation = new NodeOperationError(node, 'bad input', { itemIndex: 2 });
		expect(asNodeError(site(), api, 0)).toBe(api);
		expect(isOutcomeUnknownError(asNodeError(site(), api, 0))).toBe(true);
		expect(asNodeError(site(), operation, 0)).toBe(operation);
		const plain = new NodeApiError(node, { message: 'x' });
		expect(asNodeError(site(), plain)).toBe(plain);
	});

	it("passes n8n's cancellation error through unchanged, from either n8n-workflow line", () => {
		const cancelled = new ManualExecutionCancelledError('42');
		expect(asNodeError(site(), cancelled, 0)).toBe(cancelled);
		// The engine recognises cancellation by name, so a copy from another n8n-workflow must pass too.
		const cancelledV1 = new V1.ManualExecutionCancelledError('42');
		expect(asNodeError(site(), cancelledV1, 0)).toBe(cancelledV1);
		const timedOut = new V1.TimeoutExecutionCancelledError('42');
		expect(asNodeError(site(), timedOut, 0)).toBe(timedOut);
	});

	it('passes whatever a request failed with unchanged once the execution was cancelled', () => {
		const aborted = Object.assign(new Error('canceled'), { name: 'CanceledError', code: 'ERR_CANCELED' });
		expect(asNodeError(site(true), aborted, 0)).toBe(aborted);
	});

	it('wraps anything else in a NodeOperationError for the item, keeping the message and the cause', () => {
		const bug = new TypeError('Cannot read properties of undefined');
		const wrapped = asNodeError(site(), bug, 3);
		expect(wrapped).toBeInstanceOf(NodeOperationError);
		expect(wrapped.message).toBe('Cannot read properties of undefined');
		expect((wrapped as Error & { cause?: unknown }).cause).toBe(bug);
		expect((wrapped as NodeOperationError).context.itemIndex).toBe(3);
		expect((wrapped as NodeOperationError).node).toBe(node);
	});

	it('wraps non-Error values and works where there is no cancel signal (load options)', () => {
		const wrapped = asNodeError({ getNode: () => node }, 'plain text', 0);
		expect(wrapped).toBeInstanceOf(NodeOperationError);
		expect(wrapped.message).toBe('plain text');
	});
});
