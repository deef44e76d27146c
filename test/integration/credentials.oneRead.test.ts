/**
 * The credential is read once per node run (nodes/shared/transport/credentials.ts), not three times per request: each
 * read is a database query in n8n, and bench:scale's queue case counted them as about a third of all of n8n's
 * transactions per task. n8n's `httpRequestWithAuthentication` is handed that same copy, so the key a request carries,
 * the URL it goes to and the key masked in its answer are one version of the credential.
 */
import { HarnessCredentialsHelper } from '../harness/credentials-helper';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { generateParams as generate } from '../support/faultTable';
import { runVideo } from '../support/videoRun';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: 'sentinel-key-one-read-5c1d' });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());
afterEach(() => jest.restoreAllMocks());

const input = [{ prompt: '[[instant]] a fox' }, { prompt: '[[instant]] a cat' }, { prompt: '[[instant]] a dog' }];

describe('the credential of a node run', () => {
	it('is read once for every request of the run: submissions, polls, artifact lists and downloads', async () => {
		const reads = jest.spyOn(HarnessCredentialsHelper.prototype, 'getDecrypted');
		const result = await runVideo(mock, { ...generate('={{ $json.prompt }}'), pollInterval: 1 }, { input });
		try {
			expect(result.nodeError('Video')).toBeUndefined();
			expect(result.output('Video').map((item) => item.json.status)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
			const log = await mock.log();
			// Three submissions, a status, an artifact list and a download each: all answered (the mock refuses a
			// request without its key with 401/403, so each carried the key that one read gave).
			expect(log.length).toBeGreaterThanOrEqual(12);
			expect(log.every((entry) => entry.status < 400)).toBe(true);
			expect(reads).toHaveBeenCalledTimes(1);
		} finally {
			await result.cleanup();
		}
	});

	it('is read anew by the next run (an edit to it takes effect then)', async () => {
		const reads = jest.spyOn(HarnessCredentialsHelper.prototype, 'getDecrypted');
		for (const prompt of ['[[instant]] first run', '[[instant]] second run']) {
			const result = await runVideo(mock, generate('={{ $json.prompt }}'), { input: [{ prompt }] });
			expect(result.nodeError('Video')).toBeUndefined();
			await result.cleanup();
		}
		expect(reads).toHaveBeenCalledTimes(2);
	});
});
