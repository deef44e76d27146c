import * as fs from 'fs';
import * as path from 'path';

export interface SecretHit {
	/** `process output` or a file path. */
	where: string;
	/** How the secret was written there. */
	form: 'plain' | 'base64' | 'url-encoded';
}

const MAX_FILE_BYTES = 256 * 1024 * 1024;

/** The byte patterns a secret leaves when written plainly, base64-encoded (any alignment) or URL-encoded. */
export function secretForms(secret: string): Array<{ form: SecretHit['form']; bytes: Buffer }> {
	const raw = Buffer.from(secret);
	const forms: Array<{ form: SecretHit['form']; bytes: Buffer }> = [{ form: 'plain', bytes: raw }];
	// Base64 of a longer text contains, for one of three alignments, the encoding of the secret's aligned middle.
	for (let skip = 0; skip < 3; skip++) {
		const middle = raw.subarray(skip, skip + Math.floor((raw.length - skip) / 3) * 3);
		if (middle.length >= 9) forms.push({ form: 'base64', bytes: Buffer.from(middle.toString('base64')) });
	}
	const encoded = encodeURIComponent(secret);
	if (encoded !== secret) forms.push({ form: 'url-encoded', bytes: Buffer.from(encoded) });
	return forms;
}

/** Every place in `output` and in the files under `dir` (symlinks not followed) where the secret appears. */
export function findSecret(secret: string, output: string, dir: string): SecretHit[] {
	if (secret.length < 8) throw new Error('findSecret needs a secret of at least 8 characters to mean anything');
	const forms = secretForms(secret);
	const hits: SecretHit[] = [];
	const scan = (where: string, content: Buffer) => {
		for (const { form, bytes } of forms) {
			if (content.includes(bytes)) hits.push({ where, form });
		}
	};
	scan('process output', Buffer.from(output));
	const walk = (folder: string) => {
		for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
			const full = path.join(folder, entry.name);
			if (entry.isSymbolicLink()) continue;
			if (entry.isDirectory()) walk(full);
			else if (entry.isFile() && fs.statSync(full).size <= MAX_FILE_BYTES) scan(full, fs.readFileSync(full));
		}
	};
	walk(dir);
	return hits;
}
