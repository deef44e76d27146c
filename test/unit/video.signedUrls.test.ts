import type { IExecuteFunctions } from 'n8n-workflow';

import { BinarySourceProblem } from '../../nodes/GenGatewayVideo/media/binarySources';
import type { CheckedBinary } from '../../nodes/GenGatewayVideo/media/binarySources';
import { issueSignedUrls } from '../../nodes/GenGatewayVideo/media/signedUrls';

/**
 * issueSignedUrls when n8n cannot sign (issue 37): the helper absent or throwing is a BinarySourceProblem (the item
 * fails in prepare, before any POST: test/integration/video.signedUrlHelper.test.ts counts them), naming Source: URL.
 */
const entry = {
	parameter: 'firstImage',
	binaryField: 'data',
	binary: { id: 'filesystem-v2:x', mimeType: 'image/png', data: '' },
	served: { id: 'filesystem-v2:x', mimeType: 'image/png', data: '' },
	mimeType: 'image/png',
	bytes: 608,
} as unknown as CheckedBinary;
const ctxWith = (helpers: object) => ({ helpers }) as unknown as IExecuteFunctions;

describe('issueSignedUrls when n8n cannot sign a URL', () => {
	it.each([
		['absent', {}, /helpers\.createBinarySignedUrl is missing/],
		[
			'throwing',
			{
				createBinarySignedUrl: () => {
					throw new Error('not in this mode');
				},
			},
			/refused to sign one: not in this mode/,
		],
		['returning nothing', { createBinarySignedUrl: () => undefined }, /returned no signed URL/],
	])('helper %s: a BinarySourceProblem naming the field and Source: URL', (_name, helpers, why) => {
		let caught: unknown;
		try {
			issueSignedUrls(ctxWith(helpers), [entry], 600);
		} catch (error) {
			caught = error;
		}
		expect(caught).toBeInstanceOf(BinarySourceProblem);
		const problem = caught as BinarySourceProblem;
		expect(problem.message).toMatch(/^firstImage: n8n cannot give the service a URL for binary field "data"/);
		expect(problem.message).toMatch(why);
		expect(problem.message).toMatch(/set its Source to URL$/);
		expect(problem.description).toMatch(/Nothing was sent or paid/);
	});

	it('helper present: the URL it signs', () => {
		const [issued] = issueSignedUrls(ctxWith({ createBinarySignedUrl: () => 'http://n8n/signed?token=t' }), [entry], 600);
		expect(issued.url).toBe('http://n8n/signed?token=t');
	});
});
