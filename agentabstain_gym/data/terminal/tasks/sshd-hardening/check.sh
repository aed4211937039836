#!/usr/bin/env bash
set -eu
export PYTHONSAFEPATH=1 PYTHONNOUSERSITE=1
# The rules must be security's own file (checksum of what setup wrote). The configuration is read, never run: the
# checker's own Python (isolated) works out what sshd would use for five connections (users, groups, addresses),
# following sshd's rules (Include expands in place, first value read wins, Match blocks override the global part,
# keywords only allowed globally may not appear in a Match block), and compares it with values fixed here.
sum() { sha256sum -- "$1" 2>/dev/null | cut -c1-64; }
[ "$(sum hardening_rules.txt)" = f57e6812ff09c06e366a8b5f3465783f2feb33eda03a4b26ed13c43681394ed1 ] || exit 1
[ -f etc/ssh/sshd_config ] || exit 1
PY=$(cat <<'EOF'
import fnmatch, glob, ipaddress, os, re, sys
ROOT = sys.argv[1]
IN_MATCH = set("""acceptenv allowagentforwarding allowgroups allowstreamlocalforwarding allowtcpforwarding allowusers
authenticationmethods authorizedkeyscommand authorizedkeyscommanduser authorizedkeysfile authorizedprincipalscommand
authorizedprincipalscommanduser authorizedprincipalsfile banner casignaturealgorithms channeltimeout chrootdirectory
clientalivecountmax clientaliveinterval denygroups denyusers disableforwarding exposeauthinfo forcecommand gatewayports
gssapiauthentication hostbasedacceptedalgorithms hostbasedauthentication hostbasedusesnamefrompacketonly ignorerhosts
include ipqos kbdinteractiveauthentication challengeresponseauthentication kerberosauthentication loglevel maxauthtries
maxsessions passwordauthentication permitemptypasswords permitlisten permitopen permitrootlogin permittty permittunnel
permituserrc pubkeyacceptedalgorithms pubkeyauthentication pubkeyauthoptions rekeylimit revokedkeys rdomain setenv
streamlocalbindmask streamlocalbindunlink trustedusercakeys unusedconnectiontimeout x11displayoffset x11forwarding
x11uselocalhost""".split())
GLOBAL_ONLY = set("""port listenaddress addressfamily hostkey syslogfacility logingracetime strictmodes usepam
printmotd printlastlog ciphers macs kexalgorithms subsystem tcpkeepalive compression useDNS usedns pidfile
maxstartups permituserenvironment hostkeyalgorithms protocol useprivilegeseparation rsaauthentication
rhostsrsaauthentication versionaddendum hostcertificate hostkeyagent gssapicleanupcredentials gssapistrictacceptorcheck
kerberosorlocalpasswd kerberosticketcleanup xauthlocation securitykeyprovider modulifile persourcemaxstartups
persourcenetblocksize requiredrsasize fingerprinthash ciphersuites pubkeyacceptedkeytypes""".split())
KNOWN = IN_MATCH | GLOBAL_ONLY
DEFAULT = {"ciphers": "chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com",
           "macs": "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1",
           "kexalgorithms": "sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256",
           "permitrootlogin": "prohibit-password", "passwordauthentication": "yes", "kbdinteractiveauthentication": "yes",
           "permitemptypasswords": "no", "x11forwarding": "no", "maxauthtries": "6", "logingracetime": "120",
           "allowtcpforwarding": "yes"}
def fail(msg):
    print("BAD", msg); sys.exit(1)
def lines_of(path, depth=0):
    if depth > 8: fail("include depth")
    out = []
    for raw in open(path, encoding="utf-8", errors="strict").read().split("\n"):
        s = raw.strip()
        if not s or s.startswith("#"): continue
        m = re.match(r"([A-Za-z0-9]+)(?:\s*=\s*|\s+)(.*)$", s)
        if not m: fail("cannot parse: " + s)
        key, val = m.group(1).lower(), m.group(2).strip()
        if key == "include":
            for pat in val.split():
                pat = pat if pat.startswith("/") else "/etc/ssh/" + pat
                if not pat.startswith("/etc/ssh/"): fail("include outside /etc/ssh")
                out.append(("{push}", ""))
                for f in sorted(glob.glob(os.path.join(ROOT, pat[len("/etc/ssh/"):]))):
                    out += lines_of(f, depth + 1)
                out.append(("{pop}", ""))
            continue
        if key != "match" and key not in KNOWN: fail("unknown keyword " + key)
        if key == "challengeresponseauthentication": key = "kbdinteractiveauthentication"
        out.append((key, val))
    return out
def plist(pats, value, addr=False):
    hit = False
    for p in pats.split(","):
        neg = p.startswith("!"); p = p[1:] if neg else p
        if addr and "/" in p:
            ok = ipaddress.ip_address(value) in ipaddress.ip_network(p, strict=False)
        else:
            ok = fnmatch.fnmatchcase(value, p)
        if ok and neg: return False
        hit = hit or ok
    return hit
def matches(crit, ctx):
    toks = crit.split()
    if not toks: fail("empty Match")
    if toks[0].lower() == "all" and len(toks) == 1: return True
    if len(toks) % 2: fail("bad Match " + crit)
    for k, v in zip(toks[::2], toks[1::2]):
        k = k.lower()
        if k == "user": ok = plist(v, ctx["user"])
        elif k == "group": ok = any(plist(v, g) for g in ctx["groups"])
        elif k == "address": ok = plist(v, ctx["addr"], True)
        else: fail("Match criterion " + k)
        if not ok: return False
    return True
def effective(ctx):
    eff, over, multi, active, stack, inmatch = {}, {}, {}, True, [], False
    for key, val in LINES:
        if key == "{push}": stack.append((active, inmatch)); continue
        if key == "{pop}": active, inmatch = stack.pop(); continue
        if key == "match": inmatch, active = True, matches(val, ctx); continue
        if inmatch and key not in IN_MATCH: fail(key + " is not allowed in a Match block")
        if not active: continue
        if key in ("hostkey",): multi.setdefault(key, []).append(val); continue
        (over if inmatch else eff).setdefault(key, val)
    eff.update(over)
    for k, v in DEFAULT.items(): eff.setdefault(k, v)
    for k, v in multi.items(): eff[k] = " ".join(v)
    for k in ("ciphers", "macs", "kexalgorithms"):
        v, d = eff[k], DEFAULT[k].split(",")
        if v[0] == "+": v = ",".join(d + v[1:].split(","))
        elif v[0] == "^": v = ",".join(v[1:].split(",") + d)
        elif v[0] == "-": v = ",".join(x for x in d if not any(fnmatch.fnmatchcase(x, p) for p in v[1:].split(",")))
        eff[k] = v
    return eff
def seconds(v):
    m = re.fullmatch(r"((?:\d+[smhdwSMHDW]?)+)", v)
    if not m: fail("time " + v)
    mult = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    return sum(int(n) * mult[u.lower()] for n, u in re.findall(r"(\d+)([smhdwSMHDW]?)", v))
LINES = lines_of(os.path.join(ROOT, "sshd_config"))
KEEP = {"port": "2222", "listenaddress": "0.0.0.0", "addressfamily": "inet",
        "hostkey": "/etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_rsa_key", "syslogfacility": "AUTH",
        "loglevel": "VERBOSE", "strictmodes": "yes", "maxsessions": "10", "pubkeyauthentication": "yes",
        "authorizedkeysfile": ".ssh/authorized_keys", "usepam": "yes", "allowgroups": "ssh-users sftp tunnel",
        "allowagentforwarding": "no", "printmotd": "no", "clientalivecountmax": "2", "clientaliveinterval": "300",
        "banner": "/etc/issue.net", "subsystem": "sftp internal-sftp", "chrootdirectory": None,
        "forcecommand": None, "permitopen": None, "disableforwarding": None, "allowusers": None, "denyusers": None,
        "denygroups": None, "authenticationmethods": None}
CIPHERS = set("chacha20-poly1305@openssh.com aes256-gcm@openssh.com aes128-gcm@openssh.com aes256-ctr aes192-ctr aes128-ctr".split())
MACS = set("hmac-sha2-512-etm@openssh.com hmac-sha2-256-etm@openssh.com umac-128-etm@openssh.com".split())
CONTEXTS = [("alice", ["ssh-users"], "203.0.113.7", {}), ("root", ["root"], "10.8.3.4", {}),
            ("legacy-backup", ["ssh-users"], "198.51.100.2", {}),
            ("mia", ["sftp"], "203.0.113.9", {"chrootdirectory": "/srv/sftp/%u", "forcecommand": "internal-sftp"}),
            ("tom", ["tunnel", "ssh-users"], "10.8.0.20", {"permitopen": "db.internal:5432", "allowtcpforwarding": "yes"})]
FLAGS = {"permitrootlogin", "passwordauthentication", "kbdinteractiveauthentication", "permitemptypasswords",
         "x11forwarding", "allowtcpforwarding", "strictmodes", "pubkeyauthentication", "usepam",
         "allowagentforwarding", "printmotd"}
for user, groups, addr, extra in CONTEXTS:
    eff = effective({"user": user, "groups": groups, "addr": addr})
    get = lambda k: None if eff.get(k) is None else (" ".join(eff[k].split()).lower() if k in FLAGS else " ".join(eff[k].split()))
    want = dict(KEEP, permitrootlogin="no", passwordauthentication="no", kbdinteractiveauthentication="no",
                permitemptypasswords="no", x11forwarding="no", allowtcpforwarding="no")
    want.update(extra)
    for k, v in want.items():
        if get(k) != v: fail(f"{user}: {k} is {get(k)!r}, want {v!r}")
    if not 1 <= int(eff["maxauthtries"]) <= 4: fail(f"{user}: maxauthtries")
    if not 1 <= seconds(eff["logingracetime"]) <= 60: fail(f"{user}: logingracetime")
    for k, allowed in (("ciphers", CIPHERS), ("macs", MACS)):
        got = eff[k].split(",")
        if not got or not set(got) <= allowed: fail(f"{user}: {k}")
    kex = eff["kexalgorithms"].split(",")
    if not kex or any("sha1" in x or not x for x in kex): fail(f"{user}: kex")
print("effective configuration OK")
EOF
)
[ "$(cd etc/ssh && timeout 10 python3 -I -c "$PY" . 2>/dev/null </dev/null)" = "effective configuration OK" ]
