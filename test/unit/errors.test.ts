import type { INode } from 'n8n-workflow';

import { apiErrorFromResponse, hintForStatus, isOutcomeUnknownError, messageFromBody, networkError, redact } from '../../nodes/shared/transport/errors';

const node: INode = { id: '1', name: 'Video', type: 't', typeVersion: 1, position: [0, 0], parameters: {} };

describe('error mapping', () => {
	it('reads the service error.message, and describes bodies that have none', () => {
		expect(messageFromBody({ error: { message: 'bad duration' } }).message).toBe('bad duration');
		expect(messageFromBody('{"error":{"message":"nope"}}').message).toBe('nope');
		expect(messageFromBody('<!DOCTYPE html><html><body>Bad Gateway</body></html>').message).toMatch(/an HTML page/);
		expect(messageFromBody('{"task_id": "x"').message).toMatch(/not JSON/);
		expect(messageFromBody('').message).toMatch(/empty body/);
	});

	it('gives a hint per documented status', () => {
		expect(hintForStatus(400)).toMatch(/correct/i);
		expect(hintForStatus(403)).toMatch(/permissions/);
		expect(hintForStatus(429)).toMatch(/lower the request rate/);
		expect(hintForStatus(502)).toMatch(/Upstream or overload/);
		expect(hintForStatus(503)).toMatch(/Upstream or overload/);
	});

	it('never lets the key through, even when the service echoes it', () => {
		const key = 'sk-very-secret-123';
		const error = apiErrorFromResponse(node, {
			status: 403,
			body: { error: { message: `key ${key} lacks video scope; Authorization: Bearer ${key}` } },
			method: 'POST',
			path: '/v1/tasks/vendor',
			secrets: [key],
		});
		expect(JSON.stringify({ m: error.message, d: error.description, c: error.context })).not.toContain(key);
		expect(error.message).toContain('lacks video scope');
		expect(error.httpCode).toBe('403');
		expect(redact('Bearer abc.def', [])).toBe('Bearer ***');
	});

	it('marks unknown outcomes and says what to do', () => {
		const error = networkError(node, { code: 'ECONNRESET', method: 'POST', path: '/v1/tasks/vendor', outcomeUnknown: true });
		expect(isOutcomeUnknownError(error)).toBe(true);
		expect(error.message).toMatch(/outcome .* is unknown/);
		expect(error.message).toMatch(/may have accepted it/);
		expect(error.description).toMatch(/Before submitting again/);
		const notSent = networkError(node, { code: 'ECONNREFUSED', method: 'GET', path: '/v1/models', outcomeUnknown: false });
		expect(isOutcomeUnknownError(notSent)).toBe(false);
	});
});
