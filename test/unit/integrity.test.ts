/** The byte checks of a download (nodes/shared/binary/integrity.ts): headers read, and an mp4 walked box by box. */
import { BoxWalker, contentLength, contentRange, isIsoMedia, resumeInfo } from '../../nodes/shared/binary/integrity';
import { mp4Header } from '../mock/media';

const box = (type: string, size: number) => {
	const bytes = Buffer.alloc(size, 7);
	bytes.writeUInt32BE(size, 0);
	bytes.write(type, 4, 'latin1');
	return bytes;
};

/** Feeds `bytes` in pieces of `step`, as a socket would, and returns the verdict. */
function walk(bytes: Buffer, step = 5): string | undefined {
	const walker = new BoxWalker();
	for (let i = 0; i < bytes.length; i += step) walker.feed(bytes.subarray(i, i + step));
	return walker.verdict();
}

describe('BoxWalker', () => {
	const whole = Buffer.concat([box('ftyp', 32), box('moov', 100), box('mdat', 1000)]);

	it('finds a whole file whole, fed in any pieces', () => {
		for (const step of [1, 3, 8, 64, whole.length]) expect(walk(whole, step)).toBeUndefined();
		const walker = new BoxWalker();
		walker.feed(whole.subarray(0, 132));
		expect(walker.complete()).toBe(true);
		walker.feed(whole.subarray(132, 200));
		expect(walker.complete()).toBe(false);
		expect(walk(Buffer.concat([mp4Header(5000), Buffer.alloc(5000 - 40)]))).toBeUndefined();
	});

	it('says where a file cut inside a box stops', () => {
		expect(walk(whole.subarray(0, 500))).toBe('the mp4 stops at byte 500, inside a box that runs to byte 1132');
		expect(walk(whole.subarray(0, 140))).toBe('the mp4 stops at byte 140, inside a box that runs to byte 1132');
	});

	it('reads 64-bit box sizes', () => {
		const large = Buffer.alloc(16 + 50);
		large.writeUInt32BE(1, 0);
		large.write('mdat', 4, 'latin1');
		large.writeBigUInt64BE(66n, 8);
		expect(walk(Buffer.concat([box('ftyp', 24), large]))).toBeUndefined();
		expect(walk(Buffer.concat([box('ftyp', 24), large.subarray(0, 40)]))).toMatch(/runs to byte 90$/);
		const cutHeader = Buffer.concat([box('ftyp', 24), large.subarray(0, 12)]);
		expect(walk(cutHeader)).toBe('the mp4 stops at byte 36, inside a box header');
	});

	it('gives no verdict where it cannot judge: a box to the end, bytes that are not boxes, a few trailing bytes', () => {
		const toEnd = Buffer.concat([box('ftyp', 24), Buffer.from([0, 0, 0, 0]), Buffer.from('mdat'), Buffer.alloc(10)]);
		expect(walk(toEnd)).toBeUndefined();
		const notBoxes = Buffer.concat([box('ftyp', 24), Buffer.from([0, 0, 0, 40, 1, 2, 3, 4]), Buffer.alloc(4)]);
		expect(walk(notBoxes)).toBeUndefined();
		// The test suite's tiny fake video: a 24-byte ftyp box and 4 more bytes.
		expect(walk(Buffer.from('\x00\x00\x00\x18ftypmp42fake video bytes', 'binary'))).toBeUndefined();
	});

	it('knows an ISO media file by its first box', () => {
		expect(isIsoMedia(whole)).toBe(true);
		expect(isIsoMedia(Buffer.from('<html>Link expired</html>'))).toBe(false);
	});
});

describe('the answer headers a download is checked against', () => {
	it('reads Content-Range and Content-Length', () => {
		expect(contentRange({ 'content-range': 'bytes 900-999/1000' })).toEqual({ first: 900, last: 999, total: 1000 });
		expect(contentRange({ 'content-range': 'bytes 0-9/*' })).toEqual({ first: 0, last: 9, total: undefined });
		expect(contentRange({ 'content-range': 'bytes */1000' })).toBeUndefined();
		expect(contentRange({})).toBeUndefined();
		expect(contentLength({ 'content-length': '1234' })).toBe(1234);
		expect(contentLength({ 'content-length': 'x' })).toBeUndefined();
	});

	it('resumes only with Accept-Ranges: bytes and a strong ETag to send back as If-Range', () => {
		expect(resumeInfo({ 'accept-ranges': 'bytes', etag: '"a1"' })).toEqual({ ranges: true, etag: '"a1"' });
		expect(resumeInfo({ 'accept-ranges': 'none', etag: '"a1"' })).toEqual({ ranges: false, etag: '"a1"' });
		expect(resumeInfo({ 'accept-ranges': 'bytes', etag: 'W/"a1"' })).toEqual({ ranges: true, etag: undefined });
		expect(resumeInfo({})).toEqual({ ranges: false, etag: undefined });
	});
});
