// Time: about 12 s (12 batches of 1–3 scenarios; a broken body is fetched again after 0.5 and 1 s, really waited).
/**
 * Issue 37, invariant 2, as a property: a stored file is exactly one whole file or nothing. Video Download, Video
 * Wait for Completion (with its download) and Image (a URL answer) download from a hostile loopback server; whatever
 * it sends, each item either holds a binary equal byte for byte to one version of the file the server served, or
 * failed with no binary stored for it; a damaged file is never stored.
 *
 * Generated per scenario: the file (an mp4 of 300 B–96 KiB with moov before or after mdat, or a trailing box; a PNG;
 * or damaged: an mp4 without moov or mdat, a PNG without IEND), a second version B (other size and bytes), the
 * server's validators (strong, weak or no ETag; Last-Modified or not; whether B changes both or Last-Modified only) and
 * Accept-Ranges; the answers to requests for the whole file: whole (Content-Length, chunked or close-delimited), cut at
 * a byte near the start, anywhere or near the end (a framed body by a reset, a close-delimited one by a clean close),
 * a Content-Length shorter than the body; and the answers to resumes: a 206 with a consistent Content-Range, one that
 * starts a byte early, names another total or `*`, carries the whole file, is cut again, or an honest one (If-Range
 * decides), of either version, a 416, or a whole-file answer. Up to three scenarios run at once on one engine.
 *
 * Found and fixed (each replayed failing before): a close-delimited body (no length, not chunked) that ends cleanly
 * where its structure cannot tell: cut inside its first 8 bytes (Video stored 1–7 bytes; Image stored a PNG's first
 * 7 bytes labelled image/png), or an mp4 cut inside the header of a box after moov and mdat (stored short).
 * FC_SEED=-1491780688 FC_PATH="11:0:0:0:0:0:0:0:1:1:3:2:2:3:3:3" and
 * FC_SEED=1556359597 FC_PATH="3:1:1:1:2:3:6:5:5:5:5:5:5:5:5:5:5" replay one of each.
 * The case no client can decide (docs/reliability.md): an mp4 cut exactly where a box after moov and mdat begins is a
 * whole, playable mp4 by every sign it gives, and a few bytes after its last box (under 8: no box header) are judged
 * by the required boxes alone (integrity.ts BoxWalker); so a body that ends there (close-delimited, or a server whose
 * Content-Length falls there) is accepted: stored without the trailing box, or with part of its header.
 */
import fc from 'fast-check';
import type { ServerResponse } from 'node:http';

import { runWorkflowsTogether } from '../harness/engine';
import type { RunResult } from '../harness/engine';
import { startFakeVideoService } from '../support/fakeVideoService';
import { FAST } from '../support/videoRun';
import {
	checkProperty,
	chunk,
	imageParams,
	LAST_CHUNK,
	mp4File,
	nodeRun,
	pngFile,
	rawAnswer,
	sendError,
} from '../support/hostileServers';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequest, ScriptedServer } from '../support/scriptedServer';

const KEY = 'sentinel-key-properties-download-3c4d';

type Version = 'A' | 'B';
type Framing = 'length' | 'chunked' | 'close';
/** A byte offset: from the start (the first bytes hold the type and structure), per mille, or from the end. */
type Offset = { byte: number } | { permille: number } | { fromEnd: number };
type RangeAnswer = 'consistent' | 'startBefore' | 'otherTotal' | 'starTotal' | 'wholeBody' | 'honest';

/** An answer to a request for the whole file. */
type Fresh =
	| { kind: 'whole'; file: Version; framing: Framing }
	| { kind: 'cut'; file: Version; framing: Framing; at: Offset }
	| { kind: 'shortLength'; file: Version; short: number };
/** An answer to a resume (a request with Range): a 206 of some kind, a 416, or one for the whole file. */
type Resume = { kind: 'range'; file: Version; range: RangeAnswer; cut?: Offset } | { kind: '416' } | Fresh;

interface Scenario {
	target: 'videoDownload' | 'videoWait' | 'image';
	sizes: { A: number; B: number };
	seed: number;
	/** The mp4's boxes (mp4File); the PNG is signature, bytes, IEND. */
	layout: 'moovFirst' | 'moovLast' | 'trailingBox';
	/** mp4 without moov (or mdat), PNG without IEND: never to be stored. */
	damaged: boolean;
	acceptRanges: boolean;
	etag: 'strong' | 'weak' | 'none';
	lastModified: boolean;
	/** What tells version B from A: both validators, or only Last-Modified (the same ETag). */
	bValidators: 'both' | 'lastModifiedOnly';
	/** The answers to requests for the whole file, in order; then the last version whole. */
	fresh: Fresh[];
	/** The answers to resumes, in order; then honest ones (If-Range). */
	resumes: Resume[];
	continueOnFail: boolean;
}

const version = fc.constantFrom<Version>('A', 'B');
const framing = fc.constantFrom<Framing>('length', 'chunked', 'close');
const offset: fc.Arbitrary<Offset> = fc.oneof(
	// The first bytes name the file's type and its first structure: cuts there are likelier.
	fc.integer({ min: 0, max: 16 }).map((byte) => ({ byte })),
	fc.integer({ min: 0, max: 600 }).map((byte) => ({ byte })),
	fc.integer({ min: 0, max: 999 }).map((permille) => ({ permille })),
	// The last bytes hold PNG's IEND and the mp4's last box.
	fc.integer({ min: 1, max: 40 }).map((fromEnd) => ({ fromEnd })),
);
const freshArb: fc.Arbitrary<Fresh> = fc.oneof(
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant('whole' as const), file: version, framing }) },
	{ weight: 4, arbitrary: fc.record({ kind: fc.constant('cut' as const), file: version, framing, at: offset }) },
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant('shortLength' as const),
			file: version,
			short: fc.integer({ min: 1, max: 200 }),
		}),
	},
);
const resumeArb: fc.Arbitrary<Resume> = fc.oneof(
	{
		weight: 5,
		arbitrary: fc.record(
			{
				kind: fc.constant('range' as const),
				file: version,
				range: fc.constantFrom<RangeAnswer>(
					'consistent',
					'startBefore',
					'otherTotal',
					'starTotal',
					'wholeBody',
					'honest',
				),
				cut: offset,
			},
			{ requiredKeys: ['kind', 'file', 'range'] },
		),
	},
	{ weight: 1, arbitrary: fc.constant({ kind: '416' as const }) },
	{ weight: 1, arbitrary: freshArb },
);

const scenario: fc.Arbitrary<Scenario> = fc.record({
	target: fc.constantFrom('videoDownload' as const, 'videoWait' as const, 'image' as const),
	sizes: fc.record({
		A: fc.oneof(fc.integer({ min: 300, max: 2000 }), fc.integer({ min: 2000, max: 96 * 1024 })),
		B: fc.oneof(fc.integer({ min: 300, max: 2000 }), fc.integer({ min: 2000, max: 96 * 1024 })),
	}),
	seed: fc.integer({ min: 1, max: 1_000_000 }),
	layout: fc.constantFrom('moovFirst' as const, 'moovLast' as const, 'trailingBox' as const),
	damaged: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 5, arbitrary: fc.constant(false) }),
	acceptRanges: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
	etag: fc.constantFrom('strong' as const, 'strong' as const, 'strong' as const, 'weak' as const, 'none' as const),
	lastModified: fc.boolean(),
	bValidators: fc.constantFrom('both' as const, 'lastModifiedOnly' as const),
	fresh: fc.array(freshArb, { minLength: 0, maxLength: 3 }),
	resumes: fc.array(resumeArb, { minLength: 0, maxLength: 2 }),
	continueOnFail: fc.boolean(),
});

type Files = Record<Version, Buffer>;

function filesOf(s: Scenario): Files {
	const make = (v: Version) => {
		const seed = s.seed + (v === 'A' ? 0 : 7919);
		if (s.target === 'image') return pngFile(s.sizes[v], seed, s.damaged);
		return mp4File(s.sizes[v], seed, s.damaged ? (s.seed % 2 ? 'noMoov' : 'noMdat') : s.layout);
	};
	return { A: make('A'), B: make('B') };
}

/** B with the same ETag is only another version when Last-Modified says so: without it no client could tell. */
const sameEtag = (s: Scenario) => s.bValidators === 'lastModifiedOnly' && s.lastModified;

function validators(s: Scenario, v: Version): string[] {
	const tag = v === 'B' && !sameEtag(s) ? 'v-B' : 'v-A';
	return [
		...(s.etag === 'none' ? [] : [`ETag: ${s.etag === 'weak' ? 'W/' : ''}"${tag}"`]),
		...(s.lastModified
			? [`Last-Modified: ${v === 'A' ? 'Wed, 01 Jan 2025 00:00:00 GMT' : 'Thu, 02 Jan 2025 00:00:00 GMT'}`]
			: []),
	];
}

const at = (o: Offset, length: number) => {
	const offset = 'byte' in o ? o.byte : 'permille' in o ? Math.floor((length * o.permille) / 1000) : length - o.fromEnd;
	return Math.max(0, Math.min(length - 1, offset));
};

/**
 * The file server of a scenario: a request for the whole file gets the next fresh answer (then the last version
 * whole), a resume the next resume answer (then an honest one).
 */
function contentServer(s: Scenario, files: Files) {
	const next = { fresh: 0, resume: 0 };
	let last: Version = 'A';
	return (req: ScriptedRequest, res: ServerResponse) => {
		const asked = Number(/^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''))?.[1] ?? NaN);
		const a: Resume = Number.isInteger(asked)
			? (s.resumes[next.resume++] ?? { kind: 'range', file: last, range: 'honest' })
			: (s.fresh[next.fresh++] ?? { kind: 'whole', file: last, framing: 'length' });
		if ('file' in a) last = a.file;
		const file = files[last];
		const head = [
			`Content-Type: ${s.target === 'image' ? 'image/png' : 'video/mp4'}`,
			...(s.acceptRanges ? ['Accept-Ranges: bytes'] : []),
			...validators(s, last),
		];
		const whole = (how: Framing, body = file, end: 'close' | 'reset' = 'close', length = file.length) => {
			if (how === 'length') return rawAnswer(res, '200 OK', [...head, `Content-Length: ${length}`], body, end);
			if (how === 'chunked') {
				const bytes = Buffer.concat([chunk(body), ...(end === 'close' ? [LAST_CHUNK] : [])]);
				return rawAnswer(res, '200 OK', [...head, 'Transfer-Encoding: chunked'], bytes, end);
			}
			rawAnswer(res, '200 OK', head, body, 'close');
		};
		// A resume from past the end of this version: a 416 is all a server can say.
		if (Number.isInteger(asked) && asked >= file.length && a.kind === 'range') {
			return sendJson(
				res,
				416,
				{ error: { message: 'range not satisfiable' } },
				{ 'content-range': `bytes */${file.length}` },
			);
		}
		switch (a.kind) {
			case 'whole':
				return whole(a.framing);
			case 'cut':
				// A close-delimited body just ends early; a framed one is cut by a reset.
				return whole(a.framing, file.subarray(0, at(a.at, file.length)), 'reset');
			case 'shortLength':
				return whole('length', file, 'close', Math.max(1, file.length - a.short));
			case '416':
				return sendJson(
					res,
					416,
					{ error: { message: 'range not satisfiable' } },
					{ 'content-range': `bytes */${file.length}` },
				);
			case 'range': {
				if (
					a.range === 'honest' &&
					!(s.acceptRanges && validators(s, last).some((line) => line === `ETag: ${req.headers['if-range']}`))
				) {
					return whole('length');
				}
				const first = a.range === 'startBefore' ? Math.max(0, asked - 1) : asked;
				const total =
					a.range === 'otherTotal' ? String(file.length + 1) : a.range === 'starTotal' ? '*' : String(file.length);
				const range = `Content-Range: bytes ${first}-${file.length - 1}/${total}`;
				if (a.range === 'wholeBody') return rawAnswer(res, '206 Partial Content', [...head, range], file, 'close');
				const body = file.subarray(first);
				const sent = a.cut ? body.subarray(0, at(a.cut, body.length)) : body;
				return rawAnswer(
					res,
					'206 Partial Content',
					[...head, range, `Content-Length: ${body.length}`],
					sent,
					a.cut ? 'reset' : 'close',
				);
			}
		}
	};
}

/** The services of a scenario: the fake video service, or an image service that answers with a URL of its own. */
async function serviceFor(s: Scenario, files: Files): Promise<ScriptedServer> {
	const content = contentServer(s, files);
	if (s.target !== 'image') return await startFakeVideoService({ status: () => ({ status: 'SUCCESS' }), content });
	const server: ScriptedServer = await startScriptedServer((req, res) => {
		if (req.method === 'POST')
			return sendJson(res, 200, { created: 1, data: [{ url: `${server.url}/files/a.png?sig=1` }] });
		if (req.path.startsWith('/files/')) return content(req, res);
		sendError(res, 404, 'no route');
	});
	return server;
}

function nodeOf(s: Scenario) {
	const settings = { continueOnFail: s.continueOnFail };
	if (s.target === 'image') return { type: 'genGatewayImage', parameters: imageParams('a fox'), ...settings };
	const parameters =
		s.target === 'videoDownload'
			? { operation: 'download', taskId: 'task_fake1' }
			: { operation: 'waitForCompletion', taskId: 'task_fake1', options: FAST };
	return { type: 'genGatewayVideo', parameters, ...settings };
}

/** What breaks the invariant in one run: a stored binary that is no version of the file, or a damaged file stored. */
async function violations(s: Scenario, files: Files, result: RunResult): Promise<string[]> {
	const found: string[] = [];
	const items = result.outputs('Node').flat();
	for (const [index, item] of items.entries()) {
		for (const property of Object.keys(item.binary ?? {})) {
			const stored = await result.readBinary(item, property);
			const same = (['A', 'B'] as const).find((v) => files[v].equals(stored));
			// Cut before the trailing box (16 bytes) or inside its 8-byte header: undecidable, see the header.
			const beforeTrailer = (v: Version) =>
				stored.length >= files[v].length - 16 &&
				stored.length < files[v].length - 8 &&
				files[v].subarray(0, stored.length).equals(stored);
			if (!same && !s.damaged && s.layout === 'trailingBox' && (['A', 'B'] as const).some(beforeTrailer)) continue;
			if (item.json.error !== undefined) found.push(`item ${index} failed but holds binary ${property}`);
			if (!same) {
				found.push(
					`item ${index} stored ${stored.length} bytes that are neither A (${files.A.length}) nor B (${files.B.length})`,
				);
			} else if (s.damaged) found.push(`item ${index} stored version ${same}, a damaged file`);
		}
		const failed = item.json.error !== undefined;
		if (!failed && !item.binary) found.push(`item ${index} has neither a binary nor an error`);
	}
	if (items.length === 0 && !result.nodeError('Node')) found.push('no item and no error');
	return found;
}

jest.setTimeout(180_000);

/** Runs the scenarios' nodes together and throws what breaks the invariant. */
async function holdsOneWholeFile(scenarios: Scenario[]): Promise<void> {
	const files = scenarios.map(filesOf);
	const servers = await Promise.all(scenarios.map(async (s, i) => await serviceFor(s, files[i])));
	let results: RunResult[] = [];
	try {
		results = await runWorkflowsTogether(
			scenarios.map((s, i) =>
				nodeRun(servers[i].url, KEY, nodeOf(s), {
					binaryMode: 'filesystem',
					executionId: `download-${Date.now()}-${i}`,
				}),
			),
		);
		const found: string[] = [];
		for (const [i, s] of scenarios.entries()) {
			for (const problem of await violations(s, files[i], results[i])) {
				found.push(`scenario ${i}: ${problem} (the node's error: ${results[i].nodeError('Node')?.message})`);
			}
		}
		if (found.length > 0) throw new Error(`Not one whole file or nothing:\n${found.join('\n')}`);
	} finally {
		await results[0]?.cleanup();
		await Promise.all(servers.map(async (server) => await server.close()));
	}
}

it('each item holds exactly one version of the file, byte for byte, or failed with nothing stored', async () => {
	await checkProperty(fc.array(scenario, { minLength: 1, maxLength: 3 }), holdsOneWholeFile, { numRuns: 12 });
});

it('a first answer cut after its first byte: the file is still judged by its structure once its bytes come (an mp4 without moov is not stored)', async () => {
	// Found by the property above in CI (2026-11-28, the release rehearsal's run): one byte told nothing of the file, so
	// no structure was chosen, and the resumed rest of an mp4 without moov was stored as whole.
	await holdsOneWholeFile([
		{
			target: 'videoDownload',
			sizes: { A: 2000, B: 300 },
			seed: 1,
			layout: 'moovFirst',
			damaged: true,
			acceptRanges: true,
			etag: 'strong',
			lastModified: false,
			bValidators: 'both',
			fresh: [{ kind: 'cut', file: 'A', framing: 'close', at: { byte: 1 } }],
			resumes: [],
			continueOnFail: false,
		} as Scenario,
	]);
});
