import { isIP, isIPv4, isIPv6 } from 'node:net';
import type { ResourceType } from '../../src/api/schemas/monitoring.ts';

/**
 * Target validation per resource type (docs/API.md#resource-fields). Each function
 * returns undefined when the target is fine, else the reason, which the
 * handler sends as a 400 naming `target`.
 */

const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A DNS name (labels of letters, digits and inner hyphens) or an IPv4 address. */
export function isHostname(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  if (isIPv4(host)) return true;
  const labels = host.replace(/\.$/, '').split('.');
  // A name made of digits only would be a mistyped IPv4 address.
  if (labels.every((l) => /^\d+$/.test(l))) return false;
  return labels.every((l) => LABEL.test(l));
}

function validPort(text: string): boolean {
  if (!/^\d{1,5}$/.test(text)) return false;
  const port = Number(text);
  return port >= 1 && port <= 65535;
}

/** `host` or `[v6]` followed by `:port`; a reason when it is not. */
export function checkHostPort(text: string, portRequired: boolean): string | undefined {
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(text);
  let host: string;
  let port: string | undefined;
  if (bracketed) {
    if (!isIPv6(bracketed[1])) return `${bracketed[1]} is not an IPv6 address`;
    host = bracketed[1];
    port = bracketed[2];
  } else {
    const colons = text.split(':').length - 1;
    if (colons > 1) return 'an IPv6 address goes in brackets: [::1]:8080';
    [host, port] = colons === 1 ? text.split(':') : [text, undefined];
    if (!isHostname(host)) return `${host || 'the host'} is not a valid host name or IPv4 address`;
  }
  if (port === undefined) return portRequired ? 'must be host:port' : undefined;
  if (!validPort(port)) return 'the port must be an integer from 1 to 65535';
  return undefined;
}

/** A DNS label as names in the wild have them: `_sip`, `_tcp` and `_dmarc` lead with an underscore (RFC 2782, 7489). */
const DNS_LABEL = /^(?=.{1,63}$)_?[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?$/;

/** A DNS question's name (a trailing dot is fine), or an IP address (a PTR question; option rules say which types may). */
export function checkDnsTarget(target: string): string | undefined {
  if (isIP(target)) return undefined;
  if (target.length > 254 || target === '.') return 'a name has at most 253 characters';
  const labels = target.replace(/\.$/, '').split('.');
  if (!labels.every((l) => DNS_LABEL.test(l)))
    return 'must be a DNS name: labels of letters, digits and inner hyphens, separated by dots (one leading _ allowed)';
  return undefined;
}

/** A `ws://` or `wss://` URL naming a host. */
function checkWebSocketTarget(target: string): string | undefined {
  // URL parsing drops tabs and newlines silently: refuse them (and every control character) first.
  if (/[\s\x00-\x1f\x7f]/.test(target)) return 'must not contain whitespace or control characters';
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'must be a ws:// or wss:// URL';
  }
  if ((url.protocol !== 'ws:' && url.protocol !== 'wss:') || !/^wss?:\/\//i.test(target)) return 'must be a ws:// or wss:// URL';
  if (url.hostname === '') return 'must name a host';
  if (url.username || url.password) return 'must not carry credentials (use websocket.headers)';
  return undefined;
}

export function checkHttpTarget(target: string): string | undefined {
  if (/\s/.test(target)) return 'must not contain whitespace';
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL';
  if (!/^https?:\/\//i.test(target)) return 'must be an absolute http or https URL';
  if (url.hostname === '') return 'must name a host';
  return undefined;
}

export function checkTcpTarget(target: string): string | undefined {
  return checkHostPort(target, true);
}

// The image reference grammar of the distribution project (docker/reference).
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

/** Whether the first component of a reference names a registry rather than a path. */
function isRegistryComponent(component: string): boolean {
  return component.includes('.') || component.includes(':') || component === 'localhost' || /[A-Z]/.test(component);
}

/**
 * `[registry[:port]/]path[:tag|@digest]`; with `recursive` a namespace: a
 * registry, a path under it, or both, without tag or digest.
 */
export function checkDockerTarget(target: string, recursive: boolean): string | undefined {
  if (target.length > 512) return 'an image reference has at most 512 characters';
  let rest = target;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return `${digest} is not a digest (algorithm:hex)`;
  }
  const components = rest.split('/');
  let registry: string | undefined;
  if (components.length > 1 || (recursive && isRegistryComponent(components[0]))) {
    if (isRegistryComponent(components[0])) registry = components.shift();
  }
  let tag: string | undefined;
  const last = components.length ? components[components.length - 1] : '';
  const colon = last.indexOf(':');
  if (colon >= 0) {
    tag = last.slice(colon + 1);
    components[components.length - 1] = last.slice(0, colon);
    if (!TAG.test(tag)) return `${tag} is not a valid tag`;
  }
  if (recursive && (tag !== undefined || digest !== undefined)) return 'a recursive target names a namespace: no tag or digest';
  if (registry !== undefined) {
    const reason = checkHostPort(registry, false);
    if (reason) return `registry ${registry}: ${reason}`;
  }
  if (components.length === 0) return recursive ? undefined : 'must name a repository';
  for (const component of components) {
    if (!PATH_COMPONENT.test(component)) {
      return `${component || 'an empty path component'} is not a valid repository path component (lower-case letters, digits, separators . _ __ -)`;
    }
  }
  if (components.join('/').length > 255) return 'the repository name has at most 255 characters';
  return undefined;
}

/** The reason a target is invalid for its type, or undefined (the protocol checks: docs/API.md#check-types). */
export function checkTarget(type: ResourceType, target: string, recursive: boolean): string | undefined {
  switch (type) {
    case 'HTTP':
      return checkHttpTarget(target);
    case 'TCP':
    case 'TLS':
    case 'UDP':
    case 'GRPC':
      return checkHostPort(target, true);
    case 'DNS':
      return checkDnsTarget(target);
    case 'PING':
      return isHostname(target) || isIPv6(target) ? undefined : 'must be a host name or an IP address (IPv6 without brackets)';
    case 'WEBSOCKET':
      return checkWebSocketTarget(target);
    case 'SSH':
      return checkHostPort(target, false);
    default:
      return checkDockerTarget(target, recursive);
  }
}
