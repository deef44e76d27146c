// Review of e0131f6 (nodes/shared/transport/credentials.ts): one read per n8n context object, shared by concurrent
// callers; a failed read is not kept (the next call reads again); another context (the next run) reads anew; the
// copy handed to n8n is the very object the URL and the masked key come from.
import type { IExecuteFunctions } from 'n8n-workflow';

import { credentialsOf, decryptedCredentials } from '../../nodes/shared/transport/credentials';

function contextWith(getCredentials: jest.Mock) {
	return {
		getCredentials,
		getNode: () => ({ credentials: { genGatewayApi: { id: 'cred1', name: 'Gateway' } } }),
	} as unknown as IExecuteFunctions;
}

describe('credentialsOf: the credential read once per context', () => {
	it('concurrent callers share one read; the copy n8n gets is that same object', async () => {
		const data = { baseUrl: 'https://a.example', apiKey: 'key-a' };
		const read = jest.fn(async () => data);
		const ctx = contextWith(read);
		const [one, two, handed] = await Promise.all([credentialsOf(ctx), credentialsOf(ctx), decryptedCredentials(ctx)]);
		expect(read).toHaveBeenCalledTimes(1);
		expect(one).toBe(data);
		expect(two).toBe(data);
		expect(handed).toEqual({ id: 'cred1', name: 'Gateway', type: 'genGatewayApi', data });
		expect(handed.data).toBe(data);
	});

	it('a failed read fails every caller that shared it, and is not kept: the next call reads again', async () => {
		const read = jest
			.fn()
			.mockRejectedValueOnce(new Error('database gone'))
			.mockResolvedValueOnce({ baseUrl: 'https://a.example', apiKey: 'key-a' });
		const ctx = contextWith(read);
		const first = await Promise.allSettled([credentialsOf(ctx), credentialsOf(ctx)]);
		expect(first.map((result) => result.status)).toEqual(['rejected', 'rejected']);
		expect(read).toHaveBeenCalledTimes(1);
		await expect(credentialsOf(ctx)).resolves.toMatchObject({ apiKey: 'key-a' });
		await expect(credentialsOf(ctx)).resolves.toMatchObject({ apiKey: 'key-a' });
		expect(read).toHaveBeenCalledTimes(2);
	});

	it('another context (the next run, a loadOptions request, a tool call) reads anew: an edited key is used then', async () => {
		const first = contextWith(jest.fn(async () => ({ baseUrl: 'https://a.example', apiKey: 'key-a' })));
		const second = contextWith(jest.fn(async () => ({ baseUrl: 'https://b.example', apiKey: 'key-b' })));
		expect(await credentialsOf(first)).toMatchObject({ baseUrl: 'https://a.example', apiKey: 'key-a' });
		expect(await credentialsOf(second)).toMatchObject({ baseUrl: 'https://b.example', apiKey: 'key-b' });
		expect(await decryptedCredentials(first)).toMatchObject({ data: { apiKey: 'key-a' } });
	});
});
