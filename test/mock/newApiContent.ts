/**
 * The new-api personality's artifact content (GET and HEAD `/v1/tasks/:id/artifacts/:key/content`, with a key or a
 * signed `?access=`): `Accept-Ranges: bytes`, an `ETag`, `Range` (206 + `Content-Range`, 416 when unsatisfiable),
 * `If-Range`, `If-None-Match` (304), `?download=1` (Content-Disposition); errors in its artifact shape (409
 * artifact_not_ready, 404 artifact_not_found, 410 artifact_gone), all masked as 404 through the capability URL.
 */
import { createHash, timingSafeEqual } from 'crypto';
import { note, sendStream, type RequestContext } from './context';
import { artifactRangeStream, artifactStream, ChunkPool, chunkSizeFor } from './media';
import { accessToken, sendArtifactError } from './newApi';
import { finishedAtMs, mediaExpiresAtMs, mediaPath, phaseOf } from './tasks';
import type { TaskRecord } from './types';

/** A strong validator for the bytes: same seed and size → same bytes → same tag. */
export function etagOf(task: TaskRecord): string {
	const digest = createHash('sha256').update(`${task.mediaSeed}:${task.script.artifactBytes}`).digest('hex');
	return `"${digest.slice(0, 32)}"`;
}

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` against `size`: the range, 'unsatisfiable', or undefined (serve it all). */
export function parseRange(header: string | undefined, size: number): [number, number] | 'unsatisfiable' | undefined {
	if (!header) return undefined;
	const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
	// Several ranges, other units, or garbage: a server may ignore Range and send everything (RFC 9110 §14.2).
	if (!m || (m[1] === '' && m[2] === '')) return undefined;
	if (m[1] === '') {
		const suffix = Number(m[2]);
		if (suffix === 0) return 'unsatisfiable';
		return [Math.max(0, size - suffix), size - 1];
	}
	const start = Number(m[1]);
	const last = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
	if (start >= size) return 'unsatisfiable';
	if (last < start) return undefined;
	return [start, last];
}

function validAccess(ctx: RequestContext, task: TaskRecord, token: string): boolean {
	const expected = Buffer.from(accessToken(ctx.state, task));
	const given = Buffer.from(token);
	return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Serves (or refuses) the content of `task` (undefined: no such task). */
export async function newApiContent(ctx: RequestContext, task: TaskRecord | undefined, key: string): Promise<void> {
	const access = ctx.url.searchParams.get('access');
	const masked = access !== null;
	const refuse = (status: number, code: string, message: string) =>
		masked
			? sendArtifactError(ctx, 404, 'artifact_not_found', 'artifact not found')
			: sendArtifactError(ctx, status, code, message);
	if (!task) return refuse(404, 'artifact_not_found', 'task not found');
	if (masked && !validAccess(ctx, task, access)) return refuse(404, 'artifact_not_found', 'invalid access token');
	if (key !== 'video') return refuse(404, 'artifact_not_found', `artifact '${key}' not found for task ${task.id}`);
	const { status } = phaseOf(task);
	if (status === 'FAILURE') return refuse(404, 'artifact_not_found', `task ${task.id} failed; it has no artifacts`);
	if (status !== 'SUCCESS') {
		return refuse(409, 'artifact_not_ready', `task ${task.id} is not finished; its artifacts are not ready yet`);
	}
	const expiresAt = mediaExpiresAtMs(task);
	if (expiresAt !== undefined && Date.now() >= expiresAt) {
		note(ctx, 'expired');
		return refuse(410, 'artifact_gone', `the artifact of task ${task.id} is no longer available upstream`);
	}
	note(ctx, `proxied:${mediaPath(task)}`);

	const size = task.script.artifactBytes;
	const etag = etagOf(task);
	const base: Record<string, string> = {
		'Content-Type': 'video/mp4',
		'Accept-Ranges': 'bytes',
		ETag: etag,
		'Last-Modified': new Date(finishedAtMs(task) ?? task.createdAtMs).toUTCString(),
		'Cache-Control': 'private, max-age=0',
		...(ctx.url.searchParams.get('download') === '1'
			? { 'Content-Disposition': `attachment; filename="${task.id}.mp4"` }
			: {}),
	};
	const { headers: rh } = ctx.req;
	if (rh['if-none-match'] !== undefined && rh['if-none-match'].split(/\s*,\s*/).includes(etag)) {
		ctx.res.writeHead(304, base);
		return void ctx.res.end();
	}
	// If-Range with another validator (or a date: ours are strong tags only) → the whole current representation.
	const ifRange = rh['if-range'];
	const range = ifRange === undefined || ifRange === etag ? parseRange(rh.range, size) : undefined;
	if (range === 'unsatisfiable') {
		return sendArtifactError(ctx, 416, 'range_not_satisfiable', `range not satisfiable (size ${size})`, {
			'Content-Range': `bytes */${size}`,
			'Accept-Ranges': 'bytes',
			ETag: etag,
		});
	}
	const [start, last] = range ?? [0, size - 1];
	const length = size === 0 ? 0 : last - start + 1;
	const headers = {
		...base,
		'Content-Length': String(length),
		...(range ? { 'Content-Range': `bytes ${start}-${last}/${size}` } : {}),
	};
	if (ctx.req.method === 'HEAD') {
		ctx.res.writeHead(range ? 206 : 200, headers);
		return void ctx.res.end();
	}
	const pool = new ChunkPool(chunkSizeFor(task.script.bytesPerSecond));
	const source = range
		? artifactRangeStream(task.mediaSeed, size, start, last + 1, pool, task.script.bytesPerSecond)
		: artifactStream(task.mediaSeed, size, pool, task.script.bytesPerSecond);
	await sendStream(
		ctx,
		range ? 206 : 200,
		headers,
		source,
		// Only a whole body is the artifact's sha256 (a part's lands in the log entry alone).
		range ? undefined : (sha) => void (task.sha256 = sha),
		pool.release,
	);
}
