import type { ServerResponse } from 'node:http';

import { sendJson, startScriptedServer } from './scriptedServer';
import type { ScriptedRequest, ScriptedServer } from './scriptedServer';

/**
 * A minimal video task service of a test's own, answering in whatever shapes the contract allows (or does not):
 * POST /v1/tasks/vendor → {task_id}, then the status and artifact bodies the test gives, then `video` bytes.
 */
export interface FakeVideoOptions {
	taskId?: string;
	/** The status body for the n-th poll (1-based). */
	status: (poll: number) => unknown;
	artifacts?: unknown;
	/** Answers the content request; default: 200 video/mp4 with `VIDEO_BYTES`. */
	content?: (req: ScriptedRequest, res: ServerResponse) => void;
}

/** A tiny whole mp4 as far as its top level goes: an `ftyp`, an empty `moov` and an `mdat` box. */
export const VIDEO_BYTES = Buffer.from(
	'\x00\x00\x00\x10ftypmp42\x00\x00\x00\x00\x00\x00\x00\x08moov\x00\x00\x00\x18mdatfake video bytes',
	'binary',
);

export async function startFakeVideoService(options: FakeVideoOptions): Promise<ScriptedServer & { polls: () => number }> {
	const taskId = options.taskId ?? 'task_fake1';
	let polls = 0;
	const server = await startScriptedServer((req, res) => {
		const path = req.path.split('?')[0];
		if (req.method === 'POST' && path === '/v1/tasks/vendor') return sendJson(res, 200, { task_id: taskId });
		if (path === `/v1/tasks/${taskId}`) return sendJson(res, 200, options.status(++polls));
		if (path === `/v1/tasks/${taskId}/artifacts`) {
			return sendJson(res, 200, options.artifacts ?? [{ key: 'video', type: 'video', mime_type: 'video/mp4' }]);
		}
		if (path === `/v1/tasks/${taskId}/artifacts/video/content`) {
			if (options.content) return options.content(req, res);
			res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO_BYTES.length });
			return void res.end(VIDEO_BYTES);
		}
		sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
	});
	return Object.assign(server, { polls: () => polls });
}
