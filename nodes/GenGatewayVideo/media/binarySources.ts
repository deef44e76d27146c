import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import { peekStream, SNIFF_BYTES } from '../../shared/binary/binary';
import { megabytes } from '../../shared/binary/imageBytes';
import { countAtMost, recordedSize } from '../../shared/binary/storedBinary';
import type { Readable } from '../../shared/transport/transport';
import { binaryFieldParameter } from '../model/fields';
import { InvalidVideoRequest } from '../model/fieldParsers';
import type { VideoModelCapabilities } from '../model/matrix';
import type { BinarySource } from '../model/parameters';
import { MAX_MEDIA_MB, maxMediaBytes, mediaTypeOf } from './mediaKinds';
import { servedBinary } from './servedCopy';

/**
 * The binary fields of an item that a frame or reference list comes from, checked before anything is paid: the field
 * exists, is stored where n8n can serve it (not in memory), is of the right kind by its bytes and within the size
 * limit. Only the first bytes are read (and, when n8n recorded no size, the file is counted up to the limit).
 */

/** A problem that is not a wrong value of a field: its own message and what to do. */
export class BinarySourceProblem extends Error {
	constructor(
		message: string,
		readonly description: string,
	) {
		super(message);
		this.name = 'BinarySourceProblem';
	}
}

/** A binary field checked to be sent: what it is, by its bytes. */
export interface CheckedBinary {
	/** The node parameter the file stands for (firstImage, referenceImages, …). */
	parameter: string;
	binaryField: string;
	binary: IBinaryData;
	/** What the signed URL serves: the binary, or a copy of a webhook's temporary upload (servedCopy.ts). */
	served: IBinaryData;
	mimeType: string;
	bytes: number;
}

const MEMORY_MODE =
	'n8n keeps this binary data in memory, and only stored binary data can be served through a signed URL. Set ' +
	'N8N_DEFAULT_BINARY_DATA_MODE=filesystem (n8n 1.x; n8n 2.x stores binary data by default) and restart n8n, or ' +
	'give a URL instead. Nothing was sent.';

function fieldsOf(binaries: Record<string, IBinaryData> | undefined): string {
	const names = Object.keys(binaries ?? {});
	return names.length > 0 ? `its binary fields: ${names.join(', ')}` : 'it has no binary data';
}

async function checkOne(
	ctx: IExecuteFunctions,
	itemIndex: number,
	model: VideoModelCapabilities,
	source: BinarySource,
	name: string,
): Promise<Omit<CheckedBinary, 'served'>> {
	const { spec } = source;
	const { kind } = spec.media;
	const parameter = binaryFieldParameter(spec);
	const refuse = (problem: string) => new InvalidVideoRequest(parameter, model.id, problem);
	const binaries = ctx.getInputData()[itemIndex]?.binary;
	if (!binaries?.[name]) throw refuse(`the input item has no binary field "${name}"; ${fieldsOf(binaries)}`);
	const binary = ctx.helpers.assertBinaryData(itemIndex, name);
	if (!binary.id) {
		throw new BinarySourceProblem(
			`${parameter}: binary field "${name}" of item ${itemIndex} is held in memory and cannot be served (model ` +
				`${model.id}); set N8N_DEFAULT_BINARY_DATA_MODE=filesystem`,
			MEMORY_MODE,
		);
	}
	const limit = maxMediaBytes(kind);
	const tooBig = (size: string) =>
		refuse(`binary field "${name}" is too big: ${size}; allowed: at most ${MAX_MEDIA_MB[kind]} MB for ${spec.what}`);
	const recorded = await recordedSize(ctx, binary);
	if (recorded !== undefined && recorded > limit) throw tooBig(`${megabytes(recorded)} (${recorded} bytes)`);

	const stream = (await ctx.helpers.getBinaryStream(binary.id)) as Readable;
	let bytes = recorded;
	try {
		const { head, ended } = await peekStream(stream, SNIFF_BYTES);
		const type = mediaTypeOf(kind, head, binary.mimeType, recorded ?? (ended ? head.length : undefined));
		if ('notOfKind' in type) {
			const label = binary.mimeType || 'no MIME type';
			const article = kind === 'video' ? 'a' : 'an';
			throw refuse(`binary field "${name}" is not ${article} ${kind} (${label}; its bytes are ${type.notOfKind})`);
		}
		if (bytes === undefined) bytes = ended ? head.length : await countAtMost(stream, limit);
		if (bytes === undefined) throw tooBig(`more than ${MAX_MEDIA_MB[kind]} MB`);
		return { parameter: spec.name, binaryField: name, binary, mimeType: type.mimeType, bytes };
	} finally {
		stream.destroy();
	}
}

/** Every binary field of the item's binary sources, checked, in the order of the fields and names. */
export async function checkBinarySources(
	ctx: IExecuteFunctions,
	itemIndex: number,
	model: VideoModelCapabilities,
	sources: BinarySource[],
): Promise<CheckedBinary[]> {
	const checked: CheckedBinary[] = [];
	for (const source of sources) {
		for (const name of source.names) {
			const entry = await checkOne(ctx, itemIndex, model, source, name);
			checked.push({ ...entry, served: await servedBinary(ctx, entry.binary, entry.mimeType) });
		}
	}
	return checked;
}
