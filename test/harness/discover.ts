import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** The package root (holds package.json, nodes/, credentials/). */
export const PACKAGE_DIR = path.resolve(__dirname, '../..');

/** Files under `dir` (relative to the package) whose path matches `<dir>/<sub>/<file>` or `<dir>/<file>`. */
function listFiles(dir: string, suffix: string, depth: 1 | 2): string[] {
	const root = path.join(PACKAGE_DIR, dir);
	if (!existsSync(root)) return [];
	const found: string[] = [];
	for (const entry of readdirSync(root, { withFileTypes: true })) {
		const full = path.join(root, entry.name);
		if (depth === 1 && entry.isFile() && entry.name.endsWith(suffix)) found.push(full);
		if (depth === 2 && entry.isDirectory()) {
			for (const file of readdirSync(full)) if (file.endsWith(suffix)) found.push(path.join(full, file));
		}
	}
	return found.sort();
}

/**
 * Instances of every exported class in the files that pass `accept`.
 * Required through the running TypeScript loader (ts-jest or ts-node), so the sources are used, not dist/.
 */
function instantiateExports<T>(files: string[], accept: (value: unknown) => value is T): T[] {
	const instances: T[] = [];
	for (const file of files) {
		let moduleExports: Record<string, unknown>;
		try {
			// eslint-disable-next-line @typescript-eslint/no-require-imports
			moduleExports = require(file) as Record<string, unknown>;
		} catch (error) {
			throw new Error(`test harness: cannot load ${path.relative(PACKAGE_DIR, file)}: ${(error as Error).message}`);
		}
		for (const exported of Object.values(moduleExports)) {
			if (typeof exported !== 'function' || !/^class\s/.test(Function.prototype.toString.call(exported))) continue;
			let instance: unknown;
			try {
				instance = new (exported as new () => unknown)();
			} catch {
				continue; // a helper class that needs constructor arguments is not a node or credential
			}
			if (accept(instance)) instances.push(instance);
		}
	}
	return instances;
}

/** The package's node classes from `nodes/<Folder>/<Name>.node.ts`. */
export function discoverNodeInstances<T>(accept: (value: unknown) => value is T): T[] {
	return instantiateExports(listFiles('nodes', '.node.ts', 2), accept);
}

/** The package's credential classes from `credentials/<Name>.credentials.ts`. */
export function discoverCredentialInstances<T>(accept: (value: unknown) => value is T): T[] {
	return instantiateExports(listFiles('credentials', '.credentials.ts', 1), accept);
}

/** The package name, used as the node type prefix a real install gives (`<package>.<node>`). */
export function packageName(): string {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	return (require(path.join(PACKAGE_DIR, 'package.json')) as { name: string }).name;
}
