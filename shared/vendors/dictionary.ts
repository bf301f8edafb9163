/**
 * The reply attributes the vendor profiles write or an operator may add to a plan's or the
 * garden's template: a subset of the dictionaries Debian's FreeRADIUS ships
 * (/usr/share/freeradius/dictionary.*), with the same names, numbers and types. Kept here so the
 * app checks a template and encodes a CoA with no FreeRADIUS installed; test/unit/vendor-profiles
 * holds every entry to the installed dictionary files.
 */

export type AttributeType = 'string' | 'integer' | 'ipaddr' | 'ipv6addr' | 'ipv6prefix';

export interface AttributeDef {
  name: string;
  /** 0 for the standard (RFC) attributes; else the Vendor-Id carried in Vendor-Specific (26). */
  vendorId: number;
  number: number;
  type: AttributeType;
  /** RFC 2868 tag (`Name:1 = value`); only ERX-Service-Activate here. */
  tagged?: boolean;
  /** Named values FreeRADIUS accepts for an integer (its VALUE lines), besides digits. */
  values?: Record<string, number>;
  /** The dictionary file that defines it (the unit test reads it). */
  file: string;
}

export const VENDOR_IDS = { mikrotik: 14988, cisco: 9, erx: 4874, huawei: 2011, alcatel: 6527 } as const;

const std = (name: string, number: number, type: AttributeType, file: string, values?: Record<string, number>) => ({
  name,
  vendorId: 0,
  number,
  type,
  file,
  ...(values ? { values } : {}),
});
const vsa =
  (vendorId: number, file: string) => (name: string, number: number, type: AttributeType, tagged?: boolean) => ({
    name,
    vendorId,
    number,
    type,
    file,
    ...(tagged ? { tagged } : {}),
  });
const mikrotik = vsa(VENDOR_IDS.mikrotik, 'dictionary.mikrotik');
const cisco = vsa(VENDOR_IDS.cisco, 'dictionary.cisco');
const erx = vsa(VENDOR_IDS.erx, 'dictionary.erx');
const huawei = vsa(VENDOR_IDS.huawei, 'dictionary.huawei');
const alc = vsa(VENDOR_IDS.alcatel, 'dictionary.alcatel.sr');

const DEFINITIONS: AttributeDef[] = [
  std('User-Name', 1, 'string', 'dictionary.rfc2865'),
  std('Service-Type', 6, 'integer', 'dictionary.rfc2865', { 'Login-User': 1, 'Framed-User': 2, Outbound: 5 }),
  std('Framed-Protocol', 7, 'integer', 'dictionary.rfc2865', { PPP: 1 }),
  std('Framed-IP-Address', 8, 'ipaddr', 'dictionary.rfc2865'),
  std('Framed-IP-Netmask', 9, 'ipaddr', 'dictionary.rfc2865'),
  std('Filter-Id', 11, 'string', 'dictionary.rfc2865'),
  std('Framed-MTU', 12, 'integer', 'dictionary.rfc2865'),
  std('Reply-Message', 18, 'string', 'dictionary.rfc2865'),
  std('Framed-Route', 22, 'string', 'dictionary.rfc2865'),
  std('Session-Timeout', 27, 'integer', 'dictionary.rfc2865'),
  std('Idle-Timeout', 28, 'integer', 'dictionary.rfc2865'),
  std('Acct-Session-Id', 44, 'string', 'dictionary.rfc2866'),
  std('Port-Limit', 62, 'integer', 'dictionary.rfc2865'),
  std('Acct-Interim-Interval', 85, 'integer', 'dictionary.rfc2869'),
  std('Framed-Pool', 88, 'string', 'dictionary.rfc2869'),
  std('Framed-IPv6-Prefix', 97, 'ipv6prefix', 'dictionary.rfc3162'),
  std('Framed-IPv6-Pool', 100, 'string', 'dictionary.rfc3162'),
  std('Delegated-IPv6-Prefix', 123, 'ipv6prefix', 'dictionary.rfc4818'),
  std('Framed-IPv6-Address', 168, 'ipv6addr', 'dictionary.rfc6911'),
  std('Delegated-IPv6-Prefix-Pool', 171, 'string', 'dictionary.rfc6911'),

  mikrotik('Mikrotik-Recv-Limit', 1, 'integer'),
  mikrotik('Mikrotik-Xmit-Limit', 2, 'integer'),
  mikrotik('Mikrotik-Group', 3, 'string'),
  mikrotik('Mikrotik-Rate-Limit', 8, 'string'),
  mikrotik('Mikrotik-Realm', 9, 'string'),
  mikrotik('Mikrotik-Host-IP', 10, 'ipaddr'),
  mikrotik('Mikrotik-Mark-Id', 11, 'string'),
  mikrotik('Mikrotik-Advertise-URL', 12, 'string'),
  mikrotik('Mikrotik-Advertise-Interval', 13, 'integer'),
  mikrotik('Mikrotik-Recv-Limit-Gigawords', 14, 'integer'),
  mikrotik('Mikrotik-Xmit-Limit-Gigawords', 15, 'integer'),
  mikrotik('Mikrotik-Total-Limit', 17, 'integer'),
  mikrotik('Mikrotik-Total-Limit-Gigawords', 18, 'integer'),
  mikrotik('Mikrotik-Address-List', 19, 'string'),
  mikrotik('Mikrotik-Delegated-IPv6-Pool', 22, 'string'),
  mikrotik('Mikrotik-DHCP-Option-Set', 23, 'string'),
  mikrotik('Mikrotik-Switching-Filter', 30, 'string'),

  cisco('Cisco-AVPair', 1, 'string'),
  cisco('Cisco-Account-Info', 250, 'string'),
  cisco('Cisco-Service-Info', 251, 'string'),
  cisco('Cisco-Command-Code', 252, 'string'),

  erx('ERX-Address-Pool-Name', 2, 'string'),
  erx('ERX-Primary-Dns', 4, 'ipaddr'),
  erx('ERX-Secondary-Dns', 5, 'ipaddr'),
  erx('ERX-Ingress-Policy-Name', 10, 'string'),
  erx('ERX-Egress-Policy-Name', 11, 'string'),
  erx('ERX-Service-Activate', 65, 'string', true),
  erx('ERX-Service-Deactivate', 66, 'string'),
  erx('ERX-IPv6-Delegated-Pool-Name', 161, 'string'),

  huawei('Huawei-Input-Average-Rate', 2, 'integer'),
  huawei('Huawei-Input-Peak-Rate', 3, 'integer'),
  huawei('Huawei-Output-Average-Rate', 5, 'integer'),
  huawei('Huawei-Output-Peak-Rate', 6, 'integer'),
  huawei('Huawei-PortalURL', 27, 'string'),
  huawei('Huawei-Qos-Profile-Name', 31, 'string'),
  huawei('Huawei-Domain-Name', 138, 'string'),

  alc('Alc-Subsc-ID-Str', 11, 'string'),
  alc('Alc-Subsc-Prof-Str', 12, 'string'),
  alc('Alc-SLA-Prof-Str', 13, 'string'),
  alc('Alc-Subscriber-QoS-Override', 126, 'string'),
  alc('Alc-Delegated-IPv6-Pool', 131, 'string'),
];

const BY_NAME = new Map(DEFINITIONS.map((d) => [d.name.toLowerCase(), d]));
const BY_CODE = new Map(DEFINITIONS.map((d) => [`${d.vendorId}/${d.number}`, d]));

export const ATTRIBUTES: readonly AttributeDef[] = DEFINITIONS;

/** The definition of an attribute by name (case-insensitive, as FreeRADIUS reads them). */
export function attributeNamed(name: string): AttributeDef | undefined {
  return BY_NAME.get(name.toLowerCase());
}

export function attributeByCode(vendorId: number, number: number): AttributeDef | undefined {
  return BY_CODE.get(`${vendorId}/${number}`);
}
