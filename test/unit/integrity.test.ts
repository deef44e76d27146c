/**
 * The byte checks of a download (nodes/shared/binary/integrity.ts): headers read, an mp4 walked box by box (whole only
 * with its moov and mdat), an image judged by its end.
 */
import {
	BoxWalker,
	contentLength,
	contentRange,
	isEncoded,
	isIsoMedia,
	resumeInfo,
	structureOf,
	validatorsOf,
} from '../../nodes/shared/binary/integrity';
import { deterministicPng, mp4Header } from '../mock/media';

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
		// At a box boundary, but without its mdat (was "complete" before issue 37).
		expect(walker.complete()).toBe(false);
		walker.feed(whole.subarray(132));
		expect(walker.complete()).toBe(true);
		walker.feed(Buffer.alloc(10));
		expect(walker.complete()).toBe(false);
		expect(walk(Buffer.concat([mp4Header(5000), Buffer.alloc(5000 - 48)]))).toBeUndefined();
		// moov after mdat (not "fast start"): whole too.
		expect(walk(Buffer.concat([box('ftyp', 32), box('mdat', 1000), box('moov', 100)]))).toBeUndefined();
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
		expect(walk(Buffer.concat([box('ftyp', 24), large, box('moov', 16)]))).toBeUndefined();
		expect(walk(Buffer.concat([box('ftyp', 24), large.subarray(0, 40)]))).toMatch(/runs to byte 90$/);
		const cutHeader = Buffer.concat([box('ftyp', 24), large.subarray(0, 12)]);
		expect(walk(cutHeader)).toBe('the mp4 stops at byte 36, inside a box header');
	});

	it('once moov and mdat went by, no verdict where it cannot judge: a box to the end, bytes that are not boxes', () => {
		const moov = box('moov', 16);
		const toEnd = Buffer.concat([box('ftyp', 24), moov, Buffer.from([0, 0, 0, 0]), Buffer.from('mdat'), Buffer.alloc(10)]);
		expect(walk(toEnd)).toBeUndefined();
		const notBoxes = Buffer.concat([box('ftyp', 24), moov, box('mdat', 20), Buffer.from([0, 0, 0, 40, 1, 2, 3, 4])]);
		expect(walk(notBoxes)).toBeUndefined();
		expect(walk(Buffer.concat([whole, Buffer.alloc(4)]))).toBeUndefined();
	});

	it('an mp4 without its moov or its mdat is not whole: cut after ftyp (at a box boundary or in the next header)', () => {
		// Issue 37: 32, 36 and 39 bytes of an mp4 were stored as the video (no verdict at a box boundary).
		for (const cutAt of [32, 36, 39]) {
			expect(walk(whole.subarray(0, cutAt))).toBe(`the mp4 stops at byte ${cutAt} and has no moov or mdat box`);
		}
		expect(walk(Buffer.concat([box('ftyp', 32), box('mdat', 1000)]))).toBe(
			'the mp4 stops at byte 1032 and has no moov box',
		);
		// Was "no verdict": the suite's old tiny fake video, a 24-byte ftyp box and 4 more bytes.
		expect(walk(Buffer.from('\x00\x00\x00\x18ftypmp42fake video bytes', 'binary'))).toBe(
			'the mp4 stops at byte 28 and has no moov or mdat box',
		);
		const garbage = Buffer.concat([box('ftyp', 24), Buffer.from([0, 0, 0, 40, 1, 2, 3, 4]), Buffer.alloc(40)]);
		expect(walk(garbage)).toBe('the mp4 stops at byte 72 and has no moov or mdat box');
		const walker = new BoxWalker();
		walker.feed(Buffer.concat([box('ftyp', 32), box('mdat', 100)]));
		expect(walker.complete()).toBe(false);
	});

	it('knows an ISO media file by its first box', () => {
		expect(isIsoMedia(whole)).toBe(true);
		expect(isIsoMedia(Buffer.from('<html>Link expired</html>'))).toBe(false);
	});
});

describe('structureOf: where a file ends by its format', () => {
	const judge = (bytes: Buffer, step = 7) => {
		const structure = structureOf(bytes.subarray(0, 64))!;
		for (let i = 0; i < bytes.length; i += step) structure.feed(bytes.subarray(i, i + step));
		return { verdict: structure.verdict(), complete: structure.complete() };
	};

	it('PNG: whole with its IEND chunk at the end, not when cut', () => {
		const png = deterministicPng('integrity', 40, 30);
		expect(judge(png)).toEqual({ verdict: undefined, complete: true });
		expect(judge(png.subarray(0, png.length >> 1)).verdict).toBe('the PNG has no IEND chunk at its end');
		expect(judge(png.subarray(0, png.length - 1)).complete).toBe(false);
	});

	/** A JPEG whose EXIF segment holds a thumbnail with its own FF D9, then tables, a frame and a scan with stuffing. */
	const segment = (code: number, payload: Buffer) =>
		Buffer.concat([Buffer.from([0xff, code, (payload.length + 2) >> 8, (payload.length + 2) & 0xff]), payload]);
	const thumbnail = Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0, 3, 7, 0xff, 0xd9]);
	const exif = segment(0xe1, Buffer.concat([Buffer.from('Exif\0\0'), Buffer.alloc(20, 4), thumbnail, Buffer.alloc(10, 5)]));
	const scan = Buffer.from([1, 2, 0xff, 0x00, 3, 0xff, 0xd0, 4, 0xff, 0xff, 0x00, 5]);
	const jpeg = Buffer.concat([
		Buffer.from([0xff, 0xd8]),
		exif,
		segment(0xdb, Buffer.alloc(65, 1)),
		segment(0xc0, Buffer.alloc(15, 2)),
		segment(0xda, Buffer.alloc(10, 3)),
		scan,
		Buffer.from([0xff, 0xd9]),
	]);
	const exifEnd = 2 + exif.length;
	/** A GIF with a global colour table, a graphic control extension and one image whose data holds a 3B. */
	const gif = Buffer.concat([
		Buffer.from('GIF89a'),
		Buffer.from([1, 0, 1, 0, 0x80, 0, 0]),
		Buffer.alloc(6, 9),
		Buffer.from([0x21, 0xf9, 4, 0, 0, 0, 0, 0]),
		Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0]),
		Buffer.from([2, 5, 0x3b, 0x3b, 1, 2, 0x3b, 0]),
		Buffer.from([0x3b]),
	]);

	it('JPEG: whole at its EOI by its segments; a thumbnail\'s FF D9 inside EXIF is not its end', () => {
		expect(judge(jpeg)).toEqual({ verdict: undefined, complete: true });
		expect(judge(jpeg, 1)).toEqual({ verdict: undefined, complete: true });
		// Cut right after the thumbnail's FF D9 (the file's last two bytes then look like an EOI).
		const cut = jpeg.indexOf(thumbnail) + thumbnail.length;
		expect(judge(jpeg.subarray(0, cut)).verdict).toBe(`the JPEG stops at byte ${cut}, before its EOI marker (FF D9)`);
		expect(judge(jpeg.subarray(0, exifEnd + 30)).complete).toBe(false);
		expect(judge(jpeg.subarray(0, jpeg.length - 2)).verdict).toMatch(/before its EOI marker/);
		expect(judge(Buffer.concat([jpeg, Buffer.alloc(3)])).verdict).toBe('the JPEG runs 3 bytes past its EOI marker');
	});

	it('GIF: whole at its trailer by its blocks; a 3B among the image data is not its end', () => {
		expect(judge(gif)).toEqual({ verdict: undefined, complete: true });
		expect(judge(gif, 1)).toEqual({ verdict: undefined, complete: true });
		const cut = gif.length - 2;
		expect(gif[cut - 1]).toBe(0x3b);
		expect(judge(gif.subarray(0, cut)).verdict).toBe(`the GIF stops at byte ${cut}, before its trailer (3B)`);
		expect(judge(gif.subarray(0, 30)).complete).toBe(false);
	});


	it('WebP: as long as its RIFF size says', () => {
		const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 '), Buffer.alloc(88, 3)]);
		webp.writeUInt32LE(webp.length - 8, 4);
		expect(judge(webp).verdict).toBeUndefined();
		expect(judge(webp.subarray(0, 50)).verdict).toBe(`the WebP stops at byte 50 of the ${webp.length} its RIFF header announces`);
		expect(judge(Buffer.concat([webp, Buffer.alloc(9)])).verdict).toBe(
			`the WebP runs past the ${webp.length} bytes its RIFF header announces`,
		);
	});

	it('an ISO image (AVIF) needs its meta and mdat boxes, an mp4 its moov and mdat; other files are not judged', () => {
		const avifFtyp = Buffer.alloc(24);
		avifFtyp.writeUInt32BE(24, 0);
		avifFtyp.write('ftypavif', 4, 'latin1');
		expect(judge(Buffer.concat([avifFtyp, box('meta', 40), box('mdat', 100)])).verdict).toBeUndefined();
		expect(judge(avifFtyp).verdict).toBe('the image stops at byte 24 and has no meta or mdat box');
		// Cut after meta, before its image data (found by an adversarial review: stored as whole before).
		expect(judge(Buffer.concat([avifFtyp, box('meta', 40)])).verdict).toBe('the image stops at byte 64 and has no mdat box');
		expect(structureOf(Buffer.from('II*\0 tiff bytes'))).toBeUndefined();
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

	it('reads the validators a resumed answer must repeat, and whether a body was encoded', () => {
		const date = 'Sat, 28 Nov 2026 03:00:00 GMT';
		expect(validatorsOf({ etag: '"a1"', 'last-modified': date })).toEqual({ etag: '"a1"', lastModified: date });
		expect(validatorsOf({ etag: 'W/"a1"' })).toEqual({ etag: undefined, lastModified: undefined });
		expect(isEncoded({ 'content-encoding': 'gzip' })).toBe(true);
		expect(isEncoded({ 'content-encoding': 'identity' })).toBe(false);
		expect(isEncoded({})).toBe(false);
	});
});
