import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import { toBinary } from '../../shared/binary/binary';
import type { Readable } from '../../shared/transport/transport';

/**
 * The binary data a signed URL serves. A file that came with a webhook request (a Form Trigger's upload, a Webhook's
 * body) is stored under a temporary name (`…/executions/temp/…`) which n8n renames when the run ends or goes waiting
 * (n8n's restoreBinaryDataId): a link to it then answers 404 while the service may not have fetched it yet (measured
 * in n8n 2.41.1). Such a file is copied once into this execution's own binary data, which n8n never renames, so its
 * link lives Max Wait like any other.
 */

/** Whether n8n stored the binary under the temporary name of a webhook's upload (any storage mode). */
export function isTemporaryUpload(id: string): boolean {
	const file = id.slice(id.indexOf(':') + 1);
	return file.includes('/temp/');
}

/** The binary itself, or for a webhook's temporary upload a copy of it in this execution's binary data. */
export async function servedBinary(ctx: IExecuteFunctions, binary: IBinaryData, mimeType: string): Promise<IBinaryData> {
	if (!binary.id || !isTemporaryUpload(binary.id)) return binary;
	const stream = (await ctx.helpers.getBinaryStream(binary.id)) as Readable;
	return await toBinary(ctx, stream, { fileName: binary.fileName ?? 'upload', mimeType });
}
