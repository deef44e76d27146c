/**
 * The Image node's file downloads go through the same checked path as Video's (nodes/shared/binary/download.ts): a
 * body cut mid-way resumes with Range from the byte where it stopped, and the bytes stored are exact.
 */
import { createHash, randomBytes } from 'node:crypto';

import { runWorkflow } from '../harness/engine';
import { sendJson, startScriptedServer } from '../support/scriptedServer';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A PNG's signature and its closing IEND chunk around 1 MiB of other bytes (a stored PNG must end with IEND). */
const IEND = Buffer.from('0000000049454e44ae426082', 'hex');
const IMAGE = Buffer.concat([PNG_SIGNATURE, randomBytes(1024 * 1024), IEND]);
const ETAG = '"img-v1"';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

it('Image: a file download cut at 90 % resumes with Range and If-Range; the stored image is exact', async () => {
	const cutAt = Math.floor(IMAGE.length * 0.9);
	let served = 0;
	const host = await startScriptedServer((req, res, index) => {
		const headers = { 'content-type': 'image/png', 'accept-ranges': 'bytes', etag: ETAG };
		if (index === 0) {
			res.writeHead(200, { ...headers, 'content-length': IMAGE.length });
			served += cutAt;
			return void res.write(IMAGE.subarray(0, cutAt), () => res.socket?.end());
		}
		const start = Number(/^bytes=(\d+)-$/.exec(String(req.headers.range))?.[1] ?? 0);
		const rest = IMAGE.subarray(start);
		served += rest.length;
		res.writeHead(206, {
			...headers,
			'content-length': rest.length,
			'content-range': `bytes ${start}-${IMAGE.length - 1}/${IMAGE.length}`,
		});
		res.end(rest);
	});
	const service = await startScriptedServer((_req, res) =>
		sendJson(res, 200, { created: 1, data: [{ url: `${host.url}/files/a.png?sig=1` }] }),
	);
	const result = await runWorkflow({
		nodes: [
			{
				name: 'Image',
				type: 'genGatewayImage',
				parameters: { operation: 'generate', model: { __rl: true, mode: 'id', value: 'img-1' }, prompt: 'a fox' },
				credentials: true,
			},
		],
		credentials: { baseUrl: service.url, apiKey: 'sentinel-key-image-integrity-1c2d' },
	});
	try {
		expect(result.error).toBeUndefined();
		expect(sha256(await result.readBinary(result.output()[0]))).toBe(sha256(IMAGE));
		expect(host.requests.map((r) => [r.headers.range, r.headers['if-range'], r.headers['accept-encoding']])).toEqual([
			[undefined, undefined, 'identity'],
			[`bytes=${cutAt}-`, ETAG, 'identity'],
		]);
		expect(served).toBe(IMAGE.length);
		expect(service.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
	} finally {
		await result.cleanup();
		await Promise.all([service.close(), host.close()]);
	}
});
