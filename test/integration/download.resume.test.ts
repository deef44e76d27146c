/**
 * Issue 37, points 3–6: a stored file is exactly one whole file or nothing, and a download never hangs. Through the
 * real Video and Image nodes on n8n-core, against loopback servers of this test's own that send these exact bytes:
 * - a resume continues the same file only when the 206 carries the first answer's validator and a consistent
 *   Content-Range; else the download starts over (no splice of file A and file B); a body longer than it announced is
 *   never appended (point 3);
 * - an mp4 cut right after its `ftyp` box, and a PNG cut before its IEND chunk, are not stored (point 4);
 * - a 416 to a resume starts the download over (point 5);
 * - a body that stalls after it began ends with the Timeout's error, direct and after a redirect (point 6).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import { runWorkflow } from '../harness/engine';
import { deterministicPng } from '../mock/media';
import type { MockClient } from '../mock/process';
import { startFakeVideoService } from '../support/fakeVideoService';
import { box, FTYP } from '../support/hostileServers';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequest, ScriptedServer } from '../support/scriptedServer';
import { runVideo } from '../support/videoRun';

const KEY = 'sentinel-key-resume-7d8e9f';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const SIZE = 1024 * 1024;

/** A whole mp4 as far as its top level goes: ftyp, moov, mdat; random, so two calls make two different files. */
const mp4 = (size: number) =>
	Buffer.concat([FTYP, box('moov', randomBytes(200)), box('mdat', randomBytes(size - FTYP.length - 208 - 8))]);
const FILE_A = mp4(SIZE);
const FILE_B = mp4(SIZE);
const CONTENT = '/v1/tasks/task_fake1/artifacts/video/content';

type Content = (req: ScriptedRequest, res: ServerResponse, index: number) => void;

async function serviceWith(content: Content) {
	let index = 0;
	return await startFakeVideoService({
		status: () => ({ status: 'SUCCESS' }),
		content: (req, res) => content(req, res, index++),
	});
}

const contentRequests = (service: ScriptedServer) => service.requests.filter((r) => r.path.split('?')[0] === CONTENT);

async function download(service: ScriptedServer) {
	return await runVideo({ url: service.url, apiKey: KEY } as MockClient, { operation: 'download', taskId: 'task_fake1' });
}

/** A raw answer written straight to the socket (no length unless given), then the connection closed. */
function raw(res: ServerResponse, status: string, headers: string[], body: Buffer): void {
	const head = [`HTTP/1.1 ${status}`, ...headers, 'Connection: close', '', ''].join('\r\n');
	res.socket!.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
}

/** 200 with the headers, the first `cutAt` bytes of `body`, then the connection closed. */
function cutAfter(res: ServerResponse, headers: Record<string, string | number>, body: Buffer, cutAt: number) {
	res.writeHead(200, headers);
	res.write(body.subarray(0, cutAt), () => res.socket?.destroy());
}

const resumeStart = (req: ScriptedRequest) => /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''))?.[1];

/** The whole of `file` with its ETag, as a fresh (Range-less) request gets it. */
function whole(res: ServerResponse, file: Buffer, etag: string) {
	res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': file.length, 'accept-ranges': 'bytes', etag });
	res.end(file);
}

async function expectStored(service: ScriptedServer, expected: Buffer) {
	const result = await download(service);
	try {
		expect(result.error).toBeUndefined();
		const stored = await result.readBinary(result.output()[0]);
		expect(stored.length).toBe(expected.length);
		expect(sha256(stored)).toBe(sha256(expected));
	} finally {
		await result.cleanup();
	}
}

describe('point 3: a resumed body continues the same file, or the download starts over', () => {
	const cutAt = Math.floor(SIZE * 0.6);

	it('a 206 with another ETag than the first answer (If-Range ignored after the file changed) is not spliced', async () => {
		const service = await serviceWith((req, res, index) => {
			const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes' };
			if (index === 0) return cutAfter(res, { ...headers, etag: '"A"', 'content-length': SIZE }, FILE_A, cutAt);
			const start = resumeStart(req);
			if (start === undefined) return whole(res, FILE_B, '"B"');
			const rest = FILE_B.subarray(Number(start));
			res.writeHead(206, {
				...headers,
				etag: '"B"',
				'content-length': rest.length,
				'content-range': `bytes ${start}-${SIZE - 1}/${SIZE}`,
			});
			res.end(rest);
		});
		try {
			await expectStored(service, FILE_B);
			const ranges = contentRequests(service).map((r) => r.headers.range);
			expect(ranges).toEqual([undefined, `bytes=${cutAt}-`, undefined]);
		} finally {
			await service.close();
		}
	});

	it('a chunked first answer cut, then "206 bytes N-M/*" with another ETag: not spliced', async () => {
		const service = await serviceWith((req, res, index) => {
			const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes' };
			if (index === 0) {
				res.writeHead(200, { ...headers, etag: '"A"' });
				return void res.write(FILE_A.subarray(0, cutAt), () => res.socket?.destroy());
			}
			const start = resumeStart(req);
			if (start === undefined) return whole(res, FILE_B, '"B"');
			const rest = FILE_B.subarray(Number(start));
			res.writeHead(206, { ...headers, etag: '"B"', 'content-range': `bytes ${start}-${SIZE - 1}/*` });
			res.end(rest);
		});
		try {
			await expectStored(service, FILE_B);
		} finally {
			await service.close();
		}
	});

	it('a 206 naming the resume byte whose body is the whole file is never appended (no 1.6 MB file of 1 MB)', async () => {
		const service = await serviceWith((req, res, index) => {
			const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', etag: '"A"' };
			if (index === 0) return cutAfter(res, { ...headers, 'content-length': SIZE }, FILE_A, cutAt);
			const start = resumeStart(req);
			if (start === undefined) return whole(res, FILE_A, '"A"');
			raw(
				res,
				'206 Partial Content',
				['Content-Type: video/mp4', 'Accept-Ranges: bytes', 'ETag: "A"', `Content-Range: bytes ${start}-${SIZE - 1}/${SIZE}`],
				FILE_A,
			);
		});
		try {
			await expectStored(service, FILE_A);
			expect(contentRequests(service).map((r) => r.headers.range)).toEqual([undefined, `bytes=${cutAt}-`, undefined]);
		} finally {
			await service.close();
		}
	});
});

describe('point 5: a 416 to a resume starts the download over', () => {
	it('cut at 90 %, the resume answered 416, then the whole file: stored exact', async () => {
		const cutAt = Math.floor(SIZE * 0.9);
		const service = await serviceWith((req, res, index) => {
			const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', etag: '"A"' };
			if (index === 0) return cutAfter(res, { ...headers, 'content-length': SIZE }, FILE_A, cutAt);
			if (resumeStart(req) !== undefined) {
				return sendJson(res, 416, { error: { message: 'range not satisfiable' } }, { 'content-range': `bytes */${SIZE}` });
			}
			whole(res, FILE_A, '"A"');
		});
		try {
			await expectStored(service, FILE_A);
			expect(contentRequests(service).map((r) => r.headers.range)).toEqual([undefined, `bytes=${cutAt}-`, undefined]);
		} finally {
			await service.close();
		}
	});
});

describe('point 4: a file cut where its structure is not whole is never stored', () => {
	it.each([32, 36, 39])('an mp4 cut after its ftyp box at byte %i (close-delimited) is not stored', async (cutAt) => {
		const service = await serviceWith((_req, res) => raw(res, '200 OK', ['Content-Type: video/mp4'], FILE_A.subarray(0, cutAt)));
		const result = await download(service);
		try {
			expect(result.output()).toEqual([]);
			expect(result.nodeError('Video')?.message).toBe(
				'Downloading task_fake1.mp4 failed: the body ended before the whole file arrived ' +
					`(the mp4 stops at byte ${cutAt} and has no moov or mdat box)`,
			);
			expect(contentRequests(service)).toHaveLength(3);
		} finally {
			await result.cleanup();
			await service.close();
		}
	});

	// Found by the property tests (properties.download): stored before, a 1-7 byte file, and a file short of its last box.
	it.each([
		['its first 7 bytes, too few to tell its type', FILE_A.subarray(0, 7), 'the body came without a length and ended after 7 bytes, where nothing in it shows the file ends'],
		['4 bytes into the header of a box after moov and mdat', Buffer.concat([FILE_A, box('free', Buffer.alloc(8)).subarray(0, 4)]), `the body came without a length and ended after ${SIZE + 4} bytes, where nothing in it shows the file ends`],
	])('an mp4 cut at %s (close-delimited) is not stored', async (_, bytes, why) => {
		const service = await serviceWith((_req, res) => raw(res, '200 OK', ['Content-Type: video/mp4'], bytes));
		const result = await download(service);
		try {
			expect(result.output()).toEqual([]);
			expect(result.nodeError('Video')?.message).toBe(`Downloading task_fake1.mp4 failed: the body ended before the whole file arrived (${why})`);
		} finally {
			await result.cleanup();
			await service.close();
		}
	});

	it('an mp4 whose moov, mdat and the rest all arrived is stored (close-delimited)', async () => {
		const service = await serviceWith((_req, res) => raw(res, '200 OK', ['Content-Type: video/mp4'], FILE_A));
		try {
			await expectStored(service, FILE_A);
		} finally {
			await service.close();
		}
	});

	it('Image: a PNG cut in half (no IEND chunk, close-delimited) is not stored; the whole PNG is', async () => {
		const png = deterministicPng('resume-png', 256, 256);
		let cut = true;
		const host = await startScriptedServer((_req, res) =>
			raw(res, '200 OK', ['Content-Type: image/png'], cut ? png.subarray(0, png.length >> 1) : png),
		);
		const service = await startScriptedServer((_req, res) =>
			sendJson(res, 200, { created: 1, data: [{ url: `${host.url}/files/a.png` }] }),
		);
		const run = async () =>
			await runWorkflow({
				nodes: [
					{
						name: 'Image',
						type: 'genGatewayImage',
						parameters: { operation: 'generate', model: { __rl: true, mode: 'id', value: 'img-1' }, prompt: 'a fox' },
						credentials: true,
					},
				],
				credentials: { baseUrl: service.url, apiKey: KEY },
			});
		try {
			const failed = await run();
			expect(failed.output()).toEqual([]);
			expect(failed.nodeError('Image')?.message).toBe(
				'Downloading image-1 failed: the body ended before the whole file arrived (the PNG has no IEND chunk at its end)',
			);
			expect(host.requests).toHaveLength(3);
			await failed.cleanup();
			cut = false;
			const stored = await run();
			expect(stored.error).toBeUndefined();
			expect(sha256(await stored.readBinary(stored.output()[0]))).toBe(sha256(png));
			await stored.cleanup();
		} finally {
			await Promise.all([service.close(), host.close()]);
		}
	});
});

describe('point 6: a body that stalls after it began ends with the Timeout error', () => {
	const png = deterministicPng('stall-png', 64, 64);
	/** A PNG's start and end around 1 MiB of other bytes: more than the 64 KiB sent before the stall. */
	const IMAGE = Buffer.concat([png.subarray(0, png.length - 12), randomBytes(SIZE), png.subarray(png.length - 12)]);

	/** Headers and the first 64 KiB, then silence with the connection open. */
	const stall = (res: ServerResponse) => {
		res.writeHead(200, { 'content-type': 'image/png', 'content-length': IMAGE.length });
		res.write(IMAGE.subarray(0, 64 * 1024));
	};

	it.each(['direct', 'redirected to another host'])('%s', async (how) => {
		const host = await startScriptedServer((_req, res) => stall(res));
		const hop = await startScriptedServer((_req, res) => {
			res.writeHead(302, { location: `${host.url}/files/a.png?sig=2` });
			res.end();
		});
		const url = how === 'direct' ? `${host.url}/files/a.png?sig=1` : `${hop.url}/go`;
		const service = await startScriptedServer((_req, res) => sendJson(res, 200, { created: 1, data: [{ url }] }));
		const started = Date.now();
		const result = await runWorkflow({
			nodes: [
				{
					name: 'Image',
					type: 'genGatewayImage',
					parameters: {
						operation: 'generate',
						model: { __rl: true, mode: 'id', value: 'img-1' },
						prompt: 'a fox',
						options: { timeout: 2 },
					},
					credentials: true,
				},
			],
			credentials: { baseUrl: service.url, apiKey: KEY },
		});
		try {
			expect(result.output()).toEqual([]);
			expect(result.nodeError('Image')?.message).toBe(
				`Downloading image-1 failed: nothing arrived for 2 s after byte ${64 * 1024} (the node's Timeout ran out)`,
			);
			// Not retried: a stall is not waited out three times.
			expect(host.requests).toHaveLength(1);
			expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
		} finally {
			await result.cleanup();
			await Promise.all([service.close(), host.close(), hop.close()]);
		}
	}, 60_000);
});
