import type { ICredentialType, ICredentialTypes } from 'n8n-workflow';
import { UnexpectedError } from 'n8n-workflow';

import { discoverCredentialInstances } from './discover';

function isCredentialType(value: unknown): value is ICredentialType {
	const candidate = value as Partial<ICredentialType> | null;
	return typeof candidate?.name === 'string' && Array.isArray(candidate.properties);
}

let packageCredentialTypesCache: ICredentialType[] | undefined;

/** This package's credential types (from credentials/*.credentials.ts). */
export function packageCredentialTypes(): ICredentialType[] {
	packageCredentialTypesCache ??= discoverCredentialInstances(isCredentialType);
	return packageCredentialTypesCache;
}

/** n8n's ICredentialTypes over the package's credential types plus test-only extras (extras do not replace real ones). */
export class HarnessCredentialTypes implements ICredentialTypes {
	private readonly byName = new Map<string, ICredentialType>();

	constructor(extra: ICredentialType[] = []) {
		for (const type of extra) this.byName.set(type.name, type);
		for (const type of packageCredentialTypes()) this.byName.set(type.name, type);
	}

	recognizes(credentialType: string): boolean {
		return this.byName.has(credentialType);
	}

	getByName(credentialType: string): ICredentialType {
		const found = this.byName.get(credentialType);
		if (!found) throw new UnexpectedError(`Unknown credential type "${credentialType}"`);
		return found;
	}

	getSupportedNodes(): string[] {
		return [];
	}

	getParentTypes(typeName: string): string[] {
		const parents = this.byName.get(typeName)?.extends ?? [];
		return parents.flatMap((parent) => [parent, ...this.getParentTypes(parent)]);
	}
}
