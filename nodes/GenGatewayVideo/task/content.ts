import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import { describeBytes, detectMediaType, looksLikeText } from '../../shared/binary/binary';
import { downloadChecked, downloadHeaders } from '../../shared/binary/download';
import type { ResumeFrom } from '../../shared/binary/download';
import { joinUrl, normaliseBaseUrl } from '../../shared/transport/baseUrl';
import { asNodeError, redact } from '../../shared/transport/errors';
import { headerMimeType, headerText } from '../../shared/transport/redaction';
import type { Lane } from '../../shared/transport/lane';
import { credentialsOf } from '../../shared/transport/credentials';
import {
	credentialSecrets,
	downloadUrl,
	gatewayStream,
	holdLane,
	waitFor,
} from '../../shared/transport/transport';
import type { StreamResponse } from '../../shared/transport/transport';
import type { Artifact } from './client';

/**
 * The content of an artifact (docs/service-interface.md §4.2), streamed into n8n's binary data through the one checked
 * download (shared/binary/download.ts): judged by its first bytes, counted, resumed with Range when it breaks.
 */

type ArtifactRef = Pick<Artifact, 'key' | 'mime_type'>;

const contentPath = (taskId: string, key: string) =>
	`/v1/tasks/${encodeURIComponent(taskId)}/artifacts/${encodeURIComponent(key)}/content`;

/** Artifacts that are media files: a JSON, HTML or empty answer for one of them is an error, not the file. */
const MEDIA_TYPE = /^(video|audio|image)\//;

/** The type an artifact should have: as listed, or video/mp4 for the key `video`. */
const declaredType = (artifact: ArtifactRef) => artifact.mime_type ?? (artifact.key === 'video' ? 'video/mp4' : '');

/**
 * The service proxies the temporary video URL, or redirects to it. A redirect is followed here, without the key to
 * another host, so that a refusal by that host (the temporary URL has expired) is reported as such and not as a
 * problem with the API key; the redirected answer gets the same checks as a direct one.
 */
async function openContent(
	ctx: IExecuteFunctions,
	taskId: string,
	artifact: ArtifactRef,
	itemIndex: number,
	turnTaken?: number,
	range?: ResumeFrom,
): Promise<StreamResponse> {
	const path = contentPath(taskId, artifact.key);
	const expectFile = MEDIA_TYPE.test(declaredType(artifact));
	const headers = downloadHeaders(range);
	const response = await gatewayStream(ctx, {
		method: 'GET',
		path,
		kind: 'read',
		itemIndex,
		turnTaken,
		expectFile,
		manualRedirect: true,
		headers,
	});
	if (response.statusCode < 300 || response.statusCode >= 400) return response;
	response.close();
	const location = response.headers.location;
	const base = normaliseBaseUrl((await credentialsOf(ctx)).baseUrl);
	let target: URL;
	try {
		target = new URL(String(Array.isArray(location) ? location[0] : location), joinUrl(base, path));
	} catch {
		throw new NodeOperationError(ctx.getNode(), `The content of task ${taskId} redirected without a usable address`, {
			itemIndex,
			description: `The service answered ${response.statusCode} with Location ` +
				`${JSON.stringify(headerText(location, await credentialSecrets(ctx), 100))}.`,
		});
	}
	const foreign = target.origin !== new URL(base).origin;
	// The host is the service's choice: its name may hold the key.
	const host = redact(target.host, await credentialSecrets(ctx));
	return await downloadUrl(ctx, target.href, itemIndex, { headers, expectFile }).catch((error: unknown) => {
		const code = Number((error as { httpCode?: unknown }).httpCode);
		if (!foreign || ![401, 403, 404, 410].includes(code)) throw asNodeError(ctx, error, itemIndex);
		throw expiredUrlError(ctx, taskId, host, code, itemIndex);
	});
}

/** A temporary video URL that its host no longer serves: what happened and what to do, without the URL's signature. */
function expiredUrlError(ctx: IExecuteFunctions, taskId: string, host: string, code: number, itemIndex: number) {
	const error = new NodeOperationError(
		ctx.getNode(),
		`The temporary video URL of task ${taskId} has expired or is gone: ${host} answered ${code}`,
		{
			itemIndex,
			description: `The service's content endpoint redirected to a temporary file URL on ${host} (not the ` +
				`service), which refused it. Such URLs expire soon after the task ends; this is not a problem with the API key. ` +
				`Run "Download" with Task ID ${taskId} now (the service may hand out a fresh URL); if the video is no longer ` +
				`available, it must be generated again.`,
		},
	);
	error.context.task_id = taskId;
	error.context.expired_url = true;
	return error;
}

/**
 * Waits between answers of 409 (`artifact_not_ready`): right after SUCCESS the artifact may lag the status. About 30 s
 * in all, then the 409 is reported.
 */
const NOT_READY_WAITS_MS = [500, 1000, 2000, 4000, 8000, 15_000];

const isNotReady = (error: unknown) => error instanceof NodeApiError && String(error.httpCode) === '409';

/** The first answer of the content, with a 409 `artifact_not_ready` waited out. */
async function openWhenReady(
	ctx: IExecuteFunctions,
	taskId: string,
	artifact: ArtifactRef,
	itemIndex: number,
	turnTaken: number,
): Promise<StreamResponse> {
	for (let attempt = 0; ; attempt++) {
		try {
			return await openContent(ctx, taskId, artifact, itemIndex, attempt === 0 ? turnTaken : undefined);
		} catch (error) {
			const delay = NOT_READY_WAITS_MS[attempt];
			if (!isNotReady(error) || delay === undefined) throw asNodeError(ctx, error, itemIndex);
			ctx.logger.warn(
				`Gen Gateway Video: artifact "${artifact.key}" of task ${taskId} not ready (409); again in ${delay} ms`,
			);
			await waitFor(ctx, delay);
		}
	}
}

/** "Not the file" when the first bytes of a media artifact are a page, a message, nothing, or media of another kind. */
async function rejectNotTheFile(
	ctx: IExecuteFunctions,
	taskId: string,
	artifact: ArtifactRef,
	head: Buffer,
	response: StreamResponse,
	totalKnown: number | undefined,
	itemIndex: number,
): Promise<void> {
	const declared = declaredType(artifact);
	const detected = detectMediaType(head);
	const kind = declared.split('/')[0];
	const textual = !detected && head.length > 0 && looksLikeText(head);
	const otherKind =
		detected !== undefined && (kind === 'video' || kind === 'image') && detected.mimeType.split('/')[0] !== kind;
	if (head.length > 0 && !(MEDIA_TYPE.test(declared) && (textual || otherKind))) return;
	const secrets = await credentialSecrets(ctx);
	const type = response.headers['content-type'];
	// The header is the service's words too: masked like the body.
	const typed = typeof type === 'string' ? ` (Content-Type ${headerText(type.split(';')[0], secrets, 100)})` : '';
	const found = redact(describeBytes(head, totalKnown), secrets);
	throw new NodeOperationError(
		ctx.getNode(),
		`Not the file: artifact "${artifact.key}" of task ${taskId} answered ${response.statusCode} with ${found}${typed}`,
		{
			itemIndex,
			description: `A ${declared || 'file'} was expected. Nothing was stored. A page or message instead of the file ` +
				'usually means its temporary URL is no longer valid; "Download" with this Task ID tries again.',
		},
	);
}

/**
 * Streams an artifact straight into n8n's binary data (never whole in memory in filesystem mode). Done right after
 * SUCCESS: the temporary URL behind the content may expire.
 */
export async function downloadArtifact(
	ctx: IExecuteFunctions,
	taskId: string,
	artifact: ArtifactRef,
	lane: Lane,
): Promise<IBinaryData> {
	const { itemIndex } = lane;
	// The lane is held until the file is stored: downloads count against the concurrency limit too.
	return await holdLane(ctx, lane, 'finish', async (turnTaken) => {
		let first = true;
		return await downloadChecked(ctx, {
			name: artifact.key === 'video' ? `${taskId}.mp4` : `${taskId}-${artifact.key}`,
			itemIndex,
			open: async (range) => {
				if (!first) return await openContent(ctx, taskId, artifact, itemIndex, undefined, range);
				first = false;
				return await openWhenReady(ctx, taskId, artifact, itemIndex, turnTaken);
			},
			accept: async (head, response, totalKnown) => {
				await rejectNotTheFile(ctx, taskId, artifact, head, response, totalKnown, itemIndex);
				const mimeType = mimeTypeOf(artifact, response, await credentialSecrets(ctx));
				return { fileName: fileNameOf(taskId, artifact.key, mimeType), mimeType };
			},
		});
	});
}

/**
 * As listed, else the answer's Content-Type (unless the generic octet-stream, no MIME type at all, or one holding the
 * key: redaction.ts headerMimeType), else video/mp4. It names the stored file and its extension too.
 */
function mimeTypeOf(artifact: ArtifactRef, response: StreamResponse, secrets: readonly string[]): string {
	const header = headerMimeType(response.headers['content-type'], secrets);
	const answered = header !== 'application/octet-stream' ? header : undefined;
	return artifact.mime_type ?? answered ?? 'video/mp4';
}

function fileNameOf(taskId: string, key: string, mimeType: string): string {
	const extension = mimeType === 'video/mp4' ? 'mp4' : (mimeType.split('/')[1] ?? 'bin');
	return key === 'video' ? `${taskId}.${extension}` : `${taskId}-${key}.${extension}`;
}
