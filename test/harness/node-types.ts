import type { IDataObject, IExecuteFunctions, INodeType, INodeTypes, IVersionedNodeType } from 'n8n-workflow';
import { NodeHelpers, UnexpectedError } from 'n8n-workflow';

import { discoverNodeInstances, packageName } from './discover';
import { HELPER_NODE_CLASSES } from './helper-nodes';

type AnyNodeType = INodeType | IVersionedNodeType;
type Execute = NonNullable<INodeType['execute']>;

function isNodeType(value: unknown): value is AnyNodeType {
	const description = (value as { description?: { name?: unknown } } | null)?.description;
	return typeof description?.name === 'string';
}

/** The name after the last '.', so `n8n-nodes-gen-gateway.genGatewayVideo` and `genGatewayVideo` both resolve. */
function shortName(type: string): string {
	return type.slice(type.lastIndexOf('.') + 1);
}

/** The highest version a node type offers (what the n8n editor picks for a new node). */
export function latestVersion(nodeType: AnyNodeType): number {
	if ('nodeVersions' in nodeType) return nodeType.currentVersion;
	const { version } = nodeType.description;
	return Array.isArray(version) ? Math.max(...version) : version;
}

/**
 * n8n's INodeTypes over a fixed set of node types, looked up by full type (`<package>.<name>`,
 * `harness.<name>`) or by the bare `description.name`.
 */
export class HarnessNodeTypes implements INodeTypes {
	private readonly byType = new Map<string, AnyNodeType>();

	private readonly byShortName = new Map<string, AnyNodeType>();

	constructor(types: Array<{ type: string; nodeType: AnyNodeType }>) {
		for (const { type, nodeType } of types) {
			this.byType.set(type, nodeType);
			this.byShortName.set(shortName(type), nodeType);
		}
	}

	/** The full type a workflow node should carry for `type` (bare package names gain the package prefix). */
	fullType(type: string): string {
		if (this.byType.has(type)) return type;
		for (const [full, nodeType] of this.byType) {
			if (shortName(full) === type && nodeType === this.byShortName.get(type)) return full;
		}
		return type;
	}

	knows(type: string): boolean {
		return this.byType.has(type) || this.byShortName.has(shortName(type));
	}

	getByName(nodeType: string): AnyNodeType {
		const found = this.byType.get(nodeType) ?? this.byShortName.get(shortName(nodeType));
		if (!found) {
			throw new UnexpectedError(`Unknown node type "${nodeType}" (known: ${[...this.byType.keys()].join(', ')})`);
		}
		return found;
	}

	getByNameAndVersion(nodeType: string, version?: number): INodeType {
		return NodeHelpers.getVersionedNodeType(this.getByName(nodeType), version);
	}

	getKnownTypes(): IDataObject {
		return Object.fromEntries([...this.byType.keys()].map((type) => [type, { className: type, sourcePath: '' }]));
	}

	/** A copy whose node types count each call of `execute` per node name into `counts` (Retry On Fail runs). */
	withExecuteCounting(counts: Map<string, number>): INodeTypes {
		const wrapped = new WeakMap<INodeType, INodeType>();
		const count = (nodeType: INodeType): INodeType => {
			const execute: Execute | undefined = nodeType.execute;
			if (!execute) return nodeType;
			let counting = wrapped.get(nodeType);
			if (!counting) {
				counting = Object.create(nodeType) as INodeType;
				counting.execute = async function (this: IExecuteFunctions, ...args: Parameters<Execute>) {
					const name = this.getNode().name;
					counts.set(name, (counts.get(name) ?? 0) + 1);
					return await execute.apply(this, args);
				};
				wrapped.set(nodeType, counting);
			}
			return counting;
		};
		return {
			getByName: (type) => this.getByName(type),
			getByNameAndVersion: (type, version) => count(this.getByNameAndVersion(type, version)),
			getKnownTypes: () => this.getKnownTypes(),
		};
	}
}

let packageNodeTypesCache: Array<{ type: string; nodeType: AnyNodeType }> | undefined;

/** This package's nodes (from nodes/<Folder>/<Name>.node.ts), typed `<package>.<description.name>`. */
export function packageNodeTypeEntries(): Array<{ type: string; nodeType: AnyNodeType }> {
	if (!packageNodeTypesCache) {
		const prefix = packageName();
		packageNodeTypesCache = discoverNodeInstances(isNodeType).map((nodeType) => ({
			type: `${prefix}.${nodeType.description.name}`,
			nodeType,
		}));
	}
	return packageNodeTypesCache;
}

/** The harness's helper nodes, typed `harness.<name>`. */
function helperNodeTypeEntries(): Array<{ type: string; nodeType: AnyNodeType }> {
	return HELPER_NODE_CLASSES.map((NodeClass) => {
		const nodeType = new NodeClass();
		return { type: nodeType.description.name, nodeType };
	});
}

/** Node types for a run: the package's, the helpers, and any test-only extras (typed by their own name). */
export function buildNodeTypes(extra: AnyNodeType[] = []): HarnessNodeTypes {
	return new HarnessNodeTypes([
		...packageNodeTypeEntries(),
		...helperNodeTypeEntries(),
		...extra.map((nodeType) => ({ type: nodeType.description.name, nodeType })),
	]);
}
