import { ascii, describeBytes, detectMediaType, looksLikeText } from '../../shared/binary/binary';
import { imageTypeOf, MAX_IMAGE_MB } from '../../shared/binary/imageBytes';

/**
 * What a binary field sent as a frame or reference must be, from its first bytes (a label can be wrong, the magic
 * numbers cannot), and how big it may be. Pure.
 */

export type MediaKind = 'image' | 'video' | 'audio';

/**
 * The most one file may weigh: images as Chat's (20 MB); videos and audios by what video services take as references
 * (clips of seconds: 100 MB of video, 20 MB of audio). Larger files fail the item before anything is paid.
 */
export const MAX_MEDIA_MB: Readonly<Record<MediaKind, number>> = { image: MAX_IMAGE_MB, video: 100, audio: 20 };

export const maxMediaBytes = (kind: MediaKind) => MAX_MEDIA_MB[kind] * 1024 * 1024;

/** The EBML header every Matroska/WebM file starts with (video or sound alike). */
const EBML_MAGIC = 0x1a45dfa3;

/** ISO base media (`ftyp`) brands that hold only sound. */
const AUDIO_BRANDS = new Set(['M4A ', 'M4B ', 'M4P ', 'F4A ', 'F4B ']);

/** Video container types from their magic numbers (mp4/mov come from detectMediaType). */
function videoType(head: Buffer): string | undefined {
	const detected = detectMediaType(head);
	if (detected?.mimeType.startsWith('video/')) {
		return AUDIO_BRANDS.has(ascii(head, 8, 12)) ? undefined : detected.mimeType;
	}
	if (head.length >= 4 && head.readUInt32BE(0) === EBML_MAGIC) return 'video/webm';
	if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'AVI ') return 'video/x-msvideo';
	return undefined;
}

/** Audio types from their magic numbers: mp3 (ID3 tag or frame sync), AAC, WAV, Ogg, FLAC, m4a, WebM audio. */
function audioType(head: Buffer): string | undefined {
	if (head.length >= 3 && ascii(head, 0, 3) === 'ID3') return 'audio/mpeg';
	if (head.length >= 2 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0) {
		// The layer bits are 00 in AAC's ADTS header, 01–11 in MPEG audio (mp3).
		return (head[1] & 0x06) === 0 ? 'audio/aac' : 'audio/mpeg';
	}
	if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WAVE') return 'audio/wav';
	if (head.length >= 4 && ascii(head, 0, 4) === 'OggS') return 'audio/ogg';
	if (head.length >= 4 && ascii(head, 0, 4) === 'fLaC') return 'audio/flac';
	if (head.length >= 12 && ascii(head, 4, 8) === 'ftyp' && AUDIO_BRANDS.has(ascii(head, 8, 12))) return 'audio/mp4';
	if (head.length >= 4 && head.readUInt32BE(0) === EBML_MAGIC) return 'audio/webm';
	return undefined;
}

/** What the bytes are when they are not of the kind asked for, in words a user can act on. */
function describeOther(head: Buffer, totalBytes: number | undefined): string {
	const other = videoType(head) ?? audioType(head);
	return other && !detectMediaType(head) ? `a ${other} file` : describeBytes(head, totalBytes);
}

/**
 * The type of bytes starting with `head` when they are of `kind`, or what they are instead. Bytes of no known type
 * pass only when they are not text and labelled with the kind (`video/…`); text or nothing never passes.
 */
export function mediaTypeOf(
	kind: MediaKind,
	head: Buffer,
	labelled: string | undefined,
	totalBytes?: number,
): { mimeType: string } | { notOfKind: string } {
	if (kind === 'image') {
		const image = imageTypeOf(head, labelled, totalBytes);
		return 'mimeType' in image ? image : { notOfKind: image.notAnImage };
	}
	const found = kind === 'video' ? videoType(head) : audioType(head);
	if (found) return { mimeType: found };
	const known = detectMediaType(head) ?? videoType(head) ?? audioType(head);
	const label = labelled?.split(';')[0].trim().toLowerCase();
	if (!known && head.length > 0 && !looksLikeText(head) && label?.startsWith(`${kind}/`)) return { mimeType: label };
	return { notOfKind: describeOther(head, totalBytes) };
}
