import type { INode } from 'n8n-workflow';

import { GenGatewayApi } from '../../credentials/GenGatewayApi.credentials';
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

/** Issue 27: every error shape new-api sends (../shared/GATEWAY-REAL.md), read as the user should see it. */
describe('error shapes of a real gateway (new-api)', () => {
	const KEY = 'sk-Live-Echo-9f8e7d6c5b4a';
	const build = (status: number, body: unknown, path = '/v1/tasks/vendor') =>
		apiErrorFromResponse(node, { status, body, method: 'POST', path, secrets: [KEY] });
	const everything = (error: ReturnType<typeof build>) =>
		JSON.stringify({ m: error.message, d: error.description, c: error.context, cause: (error as { cause?: unknown }).cause });

	it('wrapped 401 {"error":{"message","type","code":""}}: the message as headline, the type in the details', () => {
		const body = '{"error":{"message":"Invalid token (request id: 20261126T1200Z)","type":"new_api_error","code":""}}';
		expect(messageFromBody(body)).toEqual({
			message: 'Invalid token (request id: 20261126T1200Z)',
			parsed: true,
			type: 'new_api_error',
		});
		const error = build(401, body);
		expect(error.message).toBe('POST /v1/tasks/vendor failed with 401: Invalid token (request id: 20261126T1200Z)');
		expect(error.description).toBe(`${hintForStatus(401)} The service's error type "new_api_error".`);
		expect(error.context).toMatchObject({ serviceType: 'new_api_error' });
		expect(error.context.serviceCode).toBeUndefined();
	});

	it('flat {"code","message","data":null}: the message as headline, the code in the description and context', () => {
		const error = build(400, { code: 'fail_to_fetch_task', message: 'upstream: prompt rejected by policy', data: null });
		expect(error.message).toBe('POST /v1/tasks/vendor failed with 400: upstream: prompt rejected by policy');
		expect(error.description).toBe(`${hintForStatus(400)} The service's error code "fail_to_fetch_task".`);
		expect(error.context.serviceCode).toBe('fail_to_fetch_task');
		const chinese = build(429, { code: 'rate_limit', message: '当前分组上游负载已饱和，请稍后再试', data: null });
		expect(chinese.message).toBe('POST /v1/tasks/vendor failed with 429: 当前分组上游负载已饱和，请稍后再试');
		expect(chinese.description).toMatch(/^Rate limit exceeded.* The service's error code "rate_limit"\.$/);
	});

	it('content errors {"error":{"message","type":code,"code":code}} name the code once', () => {
		const body = { error: { message: 'artifact is not ready yet', type: 'artifact_not_ready', code: 'artifact_not_ready' } };
		expect(build(409, body).description).toMatch(/ The service's error code "artifact_not_ready"\.$/);
		const both = { error: { message: 'Task not found', type: 'invalid_request_error', code: 'task_missing' } };
		expect(build(404, both).description).toMatch(/ The service's error code "task_missing", type "invalid_request_error"\.$/);
	});

	it('an empty body says so, with the status; plain text gives a snippet; a body without a message shows it', () => {
		expect(build(429, '').message).toBe(
			'POST /v1/tasks/vendor failed with 429: The service answered 429 Too Many Requests with an empty body (no message of its own).',
		);
		expect(build(429, Buffer.alloc(0)).message).toMatch(/answered 429 Too Many Requests with an empty body/);
		expect(build(599, '').message).toMatch(/answered 599 with an empty body/);
		expect(build(502, 'upstream connect error or disconnect/reset before headers').message).toBe(
			'POST /v1/tasks/vendor failed with 502: The service answered with text that is not JSON: ' +
				'"upstream connect error or disconnect/reset before headers"',
		);
		expect(build(400, { code: 'bad', message: '', data: null }).message).toBe(
			'POST /v1/tasks/vendor failed with 400: The service answered without an error message: {"code":"bad","message":"","data":null}',
		);
		expect(build(400, { error: { message: '', code: 'no_words' } }).message).toMatch(/reported an error \(no_words\) without a message/);
	});

	it('never shows the key: echoed as it is, upper-cased, lower-cased, as "Bearer <key>", in code and type', () => {
		const said = `key ${KEY} / ${KEY.toUpperCase()} / ${KEY.toLowerCase()} / Authorization: Bearer ${KEY}`;
		for (const error of [
			build(401, { error: { message: said, type: `t-${KEY.toUpperCase()}`, code: KEY } }),
			build(403, { code: KEY.toLowerCase(), message: said, data: null }),
			build(429, said),
			build(400, JSON.stringify({ code: 'x', message: said })),
		]) {
			expect(everything(error).toLowerCase()).not.toContain(KEY.toLowerCase());
			expect(error.message).toContain('***');
		}
	});

	it('a long text body is cut short without leaving part of an echoed key behind', () => {
		// The key straddles the 200-character cut: masked before the cut when known, and the cut word dropped anyway.
		const text = `${'x '.repeat(95)}token ${KEY} and more text after it`;
		expect(text.indexOf(KEY)).toBeLessThan(200);
		expect(text.indexOf(KEY) + KEY.length).toBeGreaterThan(200);
		expect(build(502, text).message).not.toMatch(/sk-Live/i);
		const unknownKey = messageFromBody(text).message;
		expect(unknownKey).not.toMatch(/sk-Live/i);
		expect(unknownKey).toMatch(/token …"$/);
	});

	it('401 is a refused key exactly like 403: the same hint, and the same credential-test sentence', () => {
		expect(hintForStatus(401)).toBe(hintForStatus(403));
		const rules = new GenGatewayApi().test.rules as Array<{ type: string; properties: { value: number; message: string } }>;
		const say = (status: number) => rules.find((rule) => rule.type === 'responseCode' && rule.properties.value === status)?.properties.message;
		expect(say(401)).toBe("The service refused this key (401): check that the API key is right and may use this service's endpoints");
		expect(say(403)).toBe(say(401)!.replace('401', '403'));
	});
});
