/** Bearer-key checks. The key value never leaves this file: not logged, not echoed in errors. */
import type { IncomingMessage } from 'http';

export interface KeyPermissions {
	/** Access to the video task endpoints (default true). */
	video?: boolean;
}

export interface Access {
	/** A known key was presented. */
	authorized: boolean;
	video: boolean;
}

/** The Bearer key presented, if any (stays in the mock: callers only hash it, see limits.ts `keyLabel`). */
export function presentedKey(req: IncomingMessage): string | undefined {
	const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
	return m?.[1].trim() || undefined;
}

export function accessOf(
	req: IncomingMessage,
	apiKey: string,
	secondaryKeys: Record<string, KeyPermissions>,
): Access {
	const presented = presentedKey(req);
	if (!presented) return { authorized: false, video: false };
	if (presented === apiKey) return { authorized: true, video: true };
	const secondary = Object.prototype.hasOwnProperty.call(secondaryKeys, presented)
		? secondaryKeys[presented]
		: undefined;
	if (secondary) return { authorized: true, video: secondary.video !== false };
	return { authorized: false, video: false };
}

export const FORBIDDEN_MESSAGE = 'invalid or missing API key (send Authorization: Bearer <key>)';
export const NO_VIDEO_MESSAGE = 'this API key has no permission for video generation';
