/** The key's variants, the header helpers and the stream redactor (shared/transport/redaction.ts), issue 37 points 9–12. */
import { headerMimeType, headerText, secretVariants, StreamRedactor } from '../../nodes/shared/transport/redaction';

const KEY = 'sk-live-0123456789abcdef';

describe('secretVariants', () => {
	it('the key as stored, trimmed (as servers see it) and percent-encoded; longest first', () => {
		expect(secretVariants(`${KEY} \t`)).toEqual([`${KEY} \t`, KEY]);
		expect(secretVariants(' a/b+c=d ')).toEqual(['a%2Fb%2Bc%3Dd', ' a/b+c=d ', 'a/b+c=d']);
		expect(secretVariants('abc ')).toEqual(['abc ']);
	});
});

describe('header values', () => {
	const secrets = secretVariants(KEY);
	it('headerText: masked, on one line, bounded', () => {
		expect(headerText(`/files/${KEY}/x\n y`, secrets)).toBe('/files/***/x y');
		expect(headerText(['a', 'b'], secrets)).toBe('a, b');
		expect(headerText('x'.repeat(300), secrets, 10)).toBe('x'.repeat(10));
	});
	it('headerMimeType: a MIME type without the key, else nothing', () => {
		expect(headerMimeType('Video/MP4; charset=binary', secrets)).toBe('video/mp4');
		expect(headerMimeType(`video/${KEY}`, secrets)).toBeUndefined();
		expect(headerMimeType(`video/${KEY.toUpperCase()}`, secrets)).toBeUndefined();
		expect(headerMimeType('not a type', secrets)).toBeUndefined();
		expect(headerMimeType(undefined, secrets)).toBeUndefined();
	});
});

describe('StreamRedactor', () => {
	const run = (pieces: string[]) => {
		const redactor = new StreamRedactor(secretVariants(KEY));
		const shown = pieces.map((piece) => redactor.push(piece));
		return { shown, rest: redactor.flush() };
	};

	it('hands text on at once when its end cannot begin the key', () => {
		expect(run(['Hello ', 'world.'])).toEqual({ shown: ['Hello ', 'world.'], rest: '' });
	});

	it('holds back only an end that begins the key, and masks the key once it is whole (any letter case)', () => {
		expect(run(['key: sk-li', 've-0123', '456789ABCDEF, ok'])).toEqual({ shown: ['key: ', '', '***, ok'], rest: '' });
	});

	it('lets the held text go as soon as it stops matching the key', () => {
		expect(run(['see sk-', 'lively'])).toEqual({ shown: ['see ', 'sk-lively'], rest: '' });
	});

	it('flushes what is held at the end (a beginning of the key is not the key)', () => {
		expect(run(['ends with sk-live'])).toEqual({ shown: ['ends with '], rest: 'sk-live' });
	});
});
