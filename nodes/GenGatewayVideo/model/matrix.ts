/**
 * The video model capability matrix — docs/service-interface.md §4.3, as data, written once.
 * Node fields, local validation, defaults, the mock service and the README's model table are all derived from it.
 * Nothing anywhere infers a capability from a model's name.
 */

interface DurationRule {
	/** Inclusive bounds, in seconds. */
	min: number;
	max: number;
	/** Whether the request must carry `duration` (every model except the gk_* family). */
	required: boolean;
	/** The default the node pre-fills (and the service applies when duration may be omitted). */
	default: number;
}

/** Reference limits; 0 means the kind of reference is unsupported (`-` in the matrix). */
interface ReferenceLimits {
	images: number;
	videos: number;
	audios: number;
}

interface AudioRule {
	supported: boolean;
	/** Default of `generate_audio` when supported. */
	default: boolean;
}

export interface VideoModelCapabilities {
	id: string;
	duration: DurationRule;
	aspectRatios: readonly string[];
	resolutions: readonly string[];
	defaultResolution: string;
	references: ReferenceLimits;
	firstImage: boolean;
	lastImage: boolean;
	audio: AudioRule;
	seed: boolean;
}

export const SD_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'] as const;
export const GK_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3'] as const;
export const SDX_NSFW_C1_RATIOS = ['16:9', '9:16', '4:3', '3:4', '1:1'] as const;

const AUDIO_ON: AudioRule = { supported: true, default: true };
const AUDIO_OFF: AudioRule = { supported: true, default: false };
const NO_AUDIO: AudioRule = { supported: false, default: false };

/** The first / last frame column: which of `first_image` and `last_image` a model takes. */
const NO_FRAMES = { firstImage: false, lastImage: false };
const FIRST_AND_LAST_FRAMES = { firstImage: true, lastImage: true };
const FIRST_FRAME_ONLY = { firstImage: true, lastImage: false };

const REFS_30_10_10: ReferenceLimits = { images: 30, videos: 10, audios: 10 };
const REFS_9_3_3: ReferenceLimits = { images: 9, videos: 3, audios: 3 };
const REFS_7_IMAGES: ReferenceLimits = { images: 7, videos: 0, audios: 0 };

const required = (min: number, max: number, def: number): DurationRule => ({
	min,
	max,
	required: true,
	default: def,
});
const optional = (min: number, max: number, def: number): DurationRule => ({
	min,
	max,
	required: false,
	default: def,
});

/** sd_2.0_fast_discount and sd_2.0_mini_discount have the same capabilities (one row each, one object). */
const SD_20_SMALL_DISCOUNT: Omit<VideoModelCapabilities, 'id'> = {
	duration: required(5, 15, 5),
	aspectRatios: SD_RATIOS,
	resolutions: ['480p', '720p'],
	defaultResolution: '720p',
	references: REFS_9_3_3,
	...NO_FRAMES,
	audio: AUDIO_ON,
	seed: true,
};

/** So have sd_2.0_fast_special and sd_2.0_mini_special. */
const SD_20_SMALL_SPECIAL: Omit<VideoModelCapabilities, 'id'> = {
	duration: required(4, 15, 5),
	aspectRatios: SD_RATIOS,
	resolutions: ['720p'],
	defaultResolution: '720p',
	references: REFS_9_3_3,
	...FIRST_AND_LAST_FRAMES,
	audio: AUDIO_ON,
	seed: true,
};

export const VIDEO_MODELS: readonly VideoModelCapabilities[] = [
	{
		id: 'sd_2.5_discount',
		duration: required(5, 30, 5),
		aspectRatios: SD_RATIOS,
		resolutions: ['480p', '720p', '1080p'],
		defaultResolution: '720p',
		references: REFS_30_10_10,
		...NO_FRAMES,
		audio: AUDIO_ON,
		seed: true,
	},
	{
		id: 'sd_2.5_special',
		duration: required(5, 30, 5),
		aspectRatios: SD_RATIOS,
		resolutions: ['720p', '1080p', '2k', '4k'],
		defaultResolution: '720p',
		references: REFS_30_10_10,
		...FIRST_AND_LAST_FRAMES,
		audio: AUDIO_ON,
		seed: true,
	},
	{
		id: 'sdx_2.0_nsfw_c1',
		duration: required(5, 15, 5),
		aspectRatios: SDX_NSFW_C1_RATIOS,
		resolutions: ['480p', '720p', '1080p', '4k'],
		defaultResolution: '720p',
		references: REFS_9_3_3,
		...FIRST_AND_LAST_FRAMES,
		audio: AUDIO_OFF,
		seed: true,
	},
	{
		id: 'sd_2.0_discount',
		duration: required(5, 15, 5),
		aspectRatios: SD_RATIOS,
		resolutions: ['480p', '720p', '1080p', '4k'],
		defaultResolution: '720p',
		references: REFS_9_3_3,
		...NO_FRAMES,
		audio: AUDIO_ON,
		seed: true,
	},
	{ id: 'sd_2.0_fast_discount', ...SD_20_SMALL_DISCOUNT },
	{ id: 'sd_2.0_mini_discount', ...SD_20_SMALL_DISCOUNT },
	{ id: 'sd_2.0_fast_special', ...SD_20_SMALL_SPECIAL },
	{ id: 'sd_2.0_mini_special', ...SD_20_SMALL_SPECIAL },
	{
		id: 'sd_2.0_special',
		duration: required(5, 15, 5),
		aspectRatios: SD_RATIOS,
		resolutions: ['720p', '1080p', '2k', '4k'],
		defaultResolution: '720p',
		references: REFS_9_3_3,
		...FIRST_AND_LAST_FRAMES,
		audio: AUDIO_ON,
		seed: true,
	},
	{
		id: 'gk_video',
		duration: optional(1, 15, 8),
		aspectRatios: GK_RATIOS,
		resolutions: ['480p', '720p'],
		defaultResolution: '720p',
		references: REFS_7_IMAGES,
		...NO_FRAMES,
		audio: NO_AUDIO,
		seed: false,
	},
	{
		id: 'gk_1.5',
		duration: optional(1, 15, 8),
		aspectRatios: GK_RATIOS,
		resolutions: ['480p', '720p'],
		defaultResolution: '720p',
		references: REFS_7_IMAGES,
		...FIRST_FRAME_ONLY,
		audio: NO_AUDIO,
		seed: false,
	},
];

export const VIDEO_MODEL_IDS: readonly string[] = VIDEO_MODELS.map((m) => m.id);

export function findVideoModel(id: string): VideoModelCapabilities | undefined {
	return VIDEO_MODELS.find((m) => m.id === id);
}

/** The row of a model as the node hands it: an id (spaces around it ignored), or the row resolved already. */
export function videoModelOf(model: unknown): VideoModelCapabilities | undefined {
	if (typeof model === 'string') return findVideoModel(model.trim());
	return VIDEO_MODELS.find((row) => row === model);
}
