import type { INodeProperties } from 'n8n-workflow';

import { listArtifacts } from '../task/client';
import { downloadArtifact } from '../task/content';
import { notFinishedError } from '../task/notFinished';
import { taskOperation } from './runPolicy';
import { checkPathSegment, taskIdProperty } from './taskId';

export const properties: INodeProperties[] = [
	taskIdProperty(['download']),
	{
		displayName: 'Artifact Key',
		name: 'artifactKey',
		type: 'string',
		default: 'video',
		description: 'Which artifact to fetch; the video is "video"',
		displayOptions: { show: { operation: ['download'] } },
	},
	{
		displayName: 'Put Output File in Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		hint: 'The name of the output binary field to put the file in',
		displayOptions: { show: { operation: ['download'] } },
	},
];

/** Streams one artifact of a finished task into binary data. */
export const operation = taskOperation(properties, async (ctx, taskId, lane) => {
	const { itemIndex } = lane;
	const artifactKey = String(ctx.getNodeParameter('artifactKey', itemIndex, 'video') || 'video').trim();
	const key = checkPathSegment(ctx, 'Artifact Key', artifactKey, itemIndex);
	const property = ctx.getNodeParameter('binaryPropertyName', itemIndex, 'data') as string;
	// The listing gives the artifact's MIME type; a listing that fails or lacks the key still lets us try the key,
	// unless the task is still running or failed (task/notFinished.ts): then that is what the user learns.
	const listed = (await listArtifacts(ctx, taskId, lane).catch(() => [])).find((a) => a.key === key);
	if (!listed) {
		const notFinished = await notFinishedError(ctx, taskId, 'Download', lane);
		if (notFinished) throw notFinished;
	}
	const binary = await downloadArtifact(ctx, taskId, listed ?? { key }, lane);
	return {
		json: { task_id: taskId, artifact_key: key, mime_type: binary.mimeType, file_name: binary.fileName },
		binary: { [property]: binary },
		pairedItem: { item: itemIndex },
	};
});
