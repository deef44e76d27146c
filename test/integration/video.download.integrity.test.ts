/**
 * A stored video is a complete video (issues 27 and 28): what a broken or hostile server can do to the content
 * download, through the real Video node on n8n-core, against loopback servers of this test's own. A page or a JSON
 * error (redirected or not, whatever its Content-Type) is never stored; a body that ends early says so; a body cut
 * mid-way resumes with Range from the byte where it stopped (If-Range with the ETag) or starts over; a 409
 * artifact_not_ready right after SUCCESS is waited out.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';

import { mp4Header } from '../mock/media';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { startFakeVideoService } from '../support/fakeVideoService';
import { entriesOf, generateParams as generate, PATHS } from '../support/faultTable';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequest, ScriptedServer } from '../support/scriptedServer';
import { runVideo, sha256 } from '../support/videoRun';

const KEY = 'sentinel-key-integrity-5a4b3c';
const SIZE = 2 * 1024 * 1024;
/** An mp4 as the walker sees one: an `ftyp` box, a `moov` box, then an `mdat` box covering the rest. */
const VIDEO = Buffer.concat([mp4Header(SIZE), randomBytes(SIZE - mp4Header(SIZE).length)]);
const CONTENT = '/v1/tasks/task_fake1/artifacts/video/content';

type Content = (req: ScriptedRequest, res: ServerResponse, index: number) => void;

/** The service answers SUCCESS and lists the video; `content` answers the n-th content request (0-based). */
async function serviceWith(content: Content) {
	let index = 0;
	return await startFakeVideoService({
		status: () => ({ status: 'SUCCESS' }),
		content: (req, res) => content(req, res, index++),
	});
}

async function run(service: ScriptedServer, operation: 'download' | 'generate' = 'download') {
	const parameters =
		operation === 'download'
			? { operation: 'download', taskId: 'task_fake1' }
			: generate('a fox', { options: { pollInterval: 1, maxWait: 0.1 } });
	return await runVideo({ url: service.url, apiKey: KEY } as MockClient, parameters);
}

const contentRequests = (service: ScriptedServer) => service.requests.filter((r) => r.path.split('?')[0] === CONTENT);

/** A close-delimited answer (no length, not chunked) written straight to the socket, then closed. */
function closeDelimited(res: ServerResponse, headers: string[], body: Buffer): void {
	const head = ['HTTP/1.1 200 OK', ...headers, 'Connection: close', '', ''].join('\r\n');
	res.socket!.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
}

/** Sends `body` with the given headers, but closes the connection after `cutAt` bytes. */
function cutAfter(res: ServerResponse, headers: Record<string, string | number>, body: Buffer, cutAt: number) {
	res.writeHead(200, headers);
	res.write(body.subarray(0, cutAt), () => res.socket?.end());
}

async function expectError(service: ScriptedServer, operation: 'download' | 'generate' = 'download') {
	const result = await run(service, operation);
	try {
		expect(result.output()).toEqual([]);
		return result.nodeError('Video')!.message;
	} finally {
		await result.cleanup();
	}
}

describe('Video download: a page or a fragment is never stored as the video', () => {
	it.each([
		['an HTML "Link expired" page', 'text/html', '<!doctype html><html><body>Link expired</body></html>', /HTML page/],
		['a JSON error', 'application/json', '{"error":{"message":"signature expired"}}', /signature expired/],
	])('a 302 to a 200 with %s is refused, redirected or not', async (_name, type, page, said) => {
		const cdn = await startScriptedServer((_req, res) => {
			res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(page) });
			res.end(page);
		});
		const service = await serviceWith((_req, res) => {
			res.writeHead(302, { location: `${cdn.url}/signed/video.mp4?sig=abc` });
			res.end();
		});
		try {
			const message = await expectError(service);
			expect(message).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/signed\/video\.mp4 failed with 200: Not the file: /);
			expect(message).toMatch(said);
			expect(cdn.requests.map((r) => r.headers['accept-encoding'])).toEqual(['identity']);
		} finally {
			await Promise.all([service.close(), cdn.close()]);
		}
	});

	it('a 200 application/octet-stream whose bytes are a JSON error is refused, quoting it', async () => {
		const error = Buffer.from('{"error":{"message":"upstream quota exceeded"}}');
		const service = await serviceWith((_req, res) => {
			res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': error.length });
			res.end(error);
		});
		try {
			expect(await expectError(service)).toBe(
				'Not the file: artifact "video" of task task_fake1 answered 200 with JSON: ' +
					'"{"error":{"message":"upstream quota exceeded"}}" (Content-Type application/octet-stream)',
			);
		} finally {
			await service.close();
		}
	});

	it('a 200 video/mp4 with an empty chunked body is refused (no 0-byte mp4)', async () => {
		const service = await serviceWith((_req, res) => {
			res.writeHead(200, { 'content-type': 'video/mp4' });
			res.end();
		});
		try {
			expect(await expectError(service)).toBe(
				'Not the file: artifact "video" of task task_fake1 answered 200 with an empty body (Content-Type video/mp4)',
			);
		} finally {
			await service.close();
		}
	});

	it('a close-delimited body cut short is an error that says so (tried 3 times)', async () => {
		const cutAt = Math.floor(SIZE * 0.6);
		const service = await serviceWith((_req, res) =>
			closeDelimited(res, ['Content-Type: video/mp4'], VIDEO.subarray(0, cutAt)),
		);
		try {
			expect(await expectError(service)).toBe(
				'Downloading task_fake1.mp4 failed: the body ended before the whole file arrived ' +
					`(the mp4 stops at byte ${cutAt}, inside a box that runs to byte ${SIZE})`,
			);
			expect(contentRequests(service)).toHaveLength(3);
		} finally {
			await service.close();
		}
	});

	it('a gzip body cut in half (sent although identity was asked for) is an error that says so', async () => {
		const zipped = gzipSync(VIDEO);
		const service = await serviceWith((_req, res) =>
			closeDelimited(res, ['Content-Type: video/mp4', 'Content-Encoding: gzip'], zipped.subarray(0, zipped.length >> 1)),
		);
		try {
			expect(await expectError(service)).toMatch(
				new RegExp(
					'^Downloading task_fake1\\.mp4 failed: the body ended before the whole file arrived \\(the mp4 stops at byte ' +
						`\\d+, inside a box that runs to byte ${SIZE}\\)$`,
				),
			);
			const encodings = contentRequests(service).map((r) => r.headers['accept-encoding']);
			expect(encodings).toEqual(['identity', 'identity', 'identity']);
		} finally {
			await service.close();
		}
	});
});

it('a whole gzip body with its Content-Length (sent although identity was asked for) is stored exact', async () => {
	const zipped = gzipSync(VIDEO);
	const service = await serviceWith((_req, res) => {
		res.writeHead(200, { 'content-type': 'video/mp4', 'content-encoding': 'gzip', 'content-length': zipped.length });
		res.end(zipped);
	});
	const result = await run(service);
	try {
		expect(result.error).toBeUndefined();
		expect(sha256(await result.readBinary(result.output()[0]))).toBe(sha256(VIDEO));
		expect(contentRequests(service)).toHaveLength(1);
	} finally {
		await result.cleanup();
		await service.close();
	}
});

describe('Video download: a body cut mid-way', () => {
	const ETAG = '"v1-abc"';

	/** Serves VIDEO with Range support; the first answer is cut at 90 %. Counts the bytes it served. */
	function rangeServer(options: { ifRangeMatches?: boolean } = {}) {
		let served = 0;
		const content: Content = (req, res, index) => {
			const range = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''));
			const fresh = !range || (options.ifRangeMatches === false && index > 0) || req.headers['if-range'] !== ETAG;
			const start = fresh ? 0 : Number(range?.[1]);
			const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', etag: ETAG };
			if (index === 0) {
				served += Math.floor(SIZE * 0.9);
				return cutAfter(res, { ...headers, 'content-length': SIZE }, VIDEO, Math.floor(SIZE * 0.9));
			}
			const body = VIDEO.subarray(start);
			served += body.length;
			if (start === 0) res.writeHead(200, { ...headers, 'content-length': SIZE });
			else {
				const range = `bytes ${start}-${SIZE - 1}/${SIZE}`;
				res.writeHead(206, { ...headers, 'content-length': body.length, 'content-range': range });
			}
			res.end(body);
		};
		return { content, served: () => served };
	}

	it.each(['download', 'generate'] as const)(
		'%s: resumes with Range from the byte where it stopped (If-Range with the ETag): exact, 100 %% served (not 190 %%)',
		async (operation) => {
			const server = rangeServer();
			const service = await serviceWith(server.content);
			const result = await run(service, operation);
			try {
				expect(result.error).toBeUndefined();
				expect(sha256(await result.readBinary(result.output()[0]))).toBe(sha256(VIDEO));
				const [first, second] = contentRequests(service);
				expect(first.headers.range).toBeUndefined();
				expect(second.headers.range).toBe(`bytes=${Math.floor(SIZE * 0.9)}-`);
				expect(second.headers['if-range']).toBe(ETAG);
				expect(contentRequests(service)).toHaveLength(2);
				expect(server.served() / SIZE).toBeCloseTo(1.0, 5);
				expect(result.logs.some((line) => line.includes(`retry 2 from byte ${Math.floor(SIZE * 0.9)}`))).toBe(true);
			} finally {
				await result.cleanup();
				await service.close();
			}
		},
	);

	it('starts over when the resume is answered 200 (the file changed: If-Range did not match): exact file', async () => {
		const server = rangeServer({ ifRangeMatches: false });
		const service = await serviceWith(server.content);
		const result = await run(service);
		try {
			expect(result.error).toBeUndefined();
			expect(sha256(await result.readBinary(result.output()[0]))).toBe(sha256(VIDEO));
			const ranges = contentRequests(service).map((r) => r.headers.range);
			expect(ranges).toEqual([undefined, `bytes=${Math.floor(SIZE * 0.9)}-`]);
		} finally {
			await result.cleanup();
			await service.close();
		}
	});

	it('starts over without Accept-Ranges: exact file, the second request without Range', async () => {
		const service = await serviceWith((_req, res, index) => {
			const headers = { 'content-type': 'video/mp4', 'content-length': SIZE };
			if (index === 0) return cutAfter(res, headers, VIDEO, Math.floor(SIZE * 0.9));
			res.writeHead(200, headers);
			res.end(VIDEO);
		});
		const result = await run(service);
		try {
			expect(result.error).toBeUndefined();
			expect(sha256(await result.readBinary(result.output()[0]))).toBe(sha256(VIDEO));
			expect(contentRequests(service).map((r) => r.headers.range)).toEqual([undefined, undefined]);
		} finally {
			await result.cleanup();
			await service.close();
		}
	});
});

describe('Video download: the artifact lags the status', () => {
	it.each(['download', 'generate'] as const)('%s: a 409 artifact_not_ready twice, then the file', async (operation) => {
		const service = await serviceWith((_req, res, index) => {
			if (index < 2) {
				return sendJson(res, 409, {
					error: { message: 'artifact is not ready yet', type: 'artifact_not_ready', code: 'artifact_not_ready' },
				});
			}
			res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': SIZE });
			res.end(VIDEO);
		});
		const result = await run(service, operation);
		try {
			expect(result.error).toBeUndefined();
			expect(sha256(await result.readBinary(result.output()[0]))).toBe(sha256(VIDEO));
			expect(contentRequests(service)).toHaveLength(3);
		} finally {
			await result.cleanup();
			await service.close();
		}
	});
});

describe('Video download against the mock in new-api mode (Range, If-Range and ETag as new-api serves them)', () => {
	it('Generate + wait: the content cut at 90 % once resumes with Range; the stored video is exact', async () => {
		const mock = await spawnMockProcess({ personality: 'new-api', apiKey: KEY });
		try {
			const size = 3 * 1024 * 1024;
			const cutAt = Math.floor(size * 0.9);
			await mock.setFaults([{ method: 'GET', path: PATHS.content, kind: 'cut-mid-body', afterBytes: cutAt }]);
			const parameters = generate(`[[instant]] [[size=${size}]] cut once`, { options: { pollInterval: 1, maxWait: 0.2 } });
			const result = await runVideo(mock, parameters);
			try {
				expect(result.error).toBeUndefined();
				const [item] = result.output();
				const taskId = item.json.task_id as string;
				const whole = await fetch(`${mock.url}/v1/tasks/${taskId}/artifacts/video/content`, {
					headers: { Authorization: `Bearer ${KEY}` },
				});
				const stored = await result.readBinary(item);
				expect(stored.length).toBe(size);
				expect(sha256(stored)).toBe(sha256(Buffer.from(await whole.arrayBuffer())));
				const [cut, resumed] = entriesOf(await mock.log(), 'content');
				expect([cut.status, cut.outcome, resumed.status]).toEqual([200, 'fault:cut-mid-body', 206]);
				expect(await mock.submissions()).toBe(1);
			} finally {
				await result.cleanup();
			}
		} finally {
			await mock.stop();
		}
	});
});
