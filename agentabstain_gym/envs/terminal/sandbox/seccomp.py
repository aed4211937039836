"""A seccomp filter that takes ptrace and its relatives away from everything inside a sandbox.

Without it, an agent can trace its sandbox's pid 1 (and clear the parent-death signal that ties the sandbox to us)
or any process of its uid, including a checker. The filter is a tiny classic-BPF program built here (no libseccomp
needed), installed with no-new-privs in the launcher's ``preexec_fn`` and inherited by every process below it; it
cannot be removed. It returns EPERM for the ptrace family and refuses every system call made through a foreign ABI
(32-bit ``int 0x80`` and x32 calls on x86-64), which would otherwise bypass a filter keyed on 64-bit numbers.
Docker gets the same rules as a seccomp profile in its JSON format (:func:`docker_profile`).
"""

from __future__ import annotations

import ctypes
import errno
import json
import platform
import struct

#: The calls that read or write another process's memory or registers, or steal its file descriptors.
DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp")
#: audit arch, then syscall numbers of :data:`DENIED` for the architectures we know.
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
                            "process_madvise": 440, "kcmp": 312}),
    "aarch64": (0xC00000B7, {"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
                             "process_madvise": 440, "kcmp": 272}),
}
_X32_BIT = 0x40000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def supported() -> bool:
    """Whether this machine's architecture is one the filter knows."""
    return platform.machine() in _ARCHES


def program(machine: str | None = None) -> bytes:
    """The filter as an array of ``struct sock_filter`` (what bwrap's ``--seccomp`` and the kernel take)."""
    arch, numbers = _ARCHES[machine or platform.machine()]
    denied = [numbers[name] for name in DENIED]
    insns: list[tuple[int, int, int, int]] = []
    n_checks = len(denied)
    # layout: 0 ld arch; 1 jeq arch; 2 ld nr; 3 jge x32; 4.. jeq each; allow; deny
    deny_at = 4 + n_checks + 1
    insns.append((_LD_W_ABS, 0, 0, 4))                                   # A = seccomp_data.arch
    insns.append((_JEQ_K, 0, deny_at - 2, arch))                         # foreign ABI -> deny
    insns.append((_LD_W_ABS, 0, 0, 0))                                   # A = seccomp_data.nr
    insns.append((_JGE_K, deny_at - 4, 0, _X32_BIT if arch == 0xC000003E else 0xFFFFFFFF))
    for i, number in enumerate(denied):
        insns.append((_JEQ_K, deny_at - (4 + i) - 1, 0, number))
    insns.append((_RET_K, 0, 0, _RET_ALLOW))
    insns.append((_RET_K, 0, 0, _RET_ERRNO | errno.EPERM))
    assert len(insns) == deny_at + 1
    return b"".join(struct.pack("HBBI", *insn) for insn in insns)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> None:
    """Install the filter on the calling process (meant for a ``preexec_fn``); raises OSError if the kernel refuses.

    Sets no-new-privs first, which unprivileged filters require and which also keeps set-uid programs from regaining
    what the sandbox dropped.
    """
    code = program()
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


#: Calls Docker's own default profile refuses to unprivileged containers and that ours must refuse too, since a
#: custom profile replaces the default: new namespaces (a user namespace would hand out capabilities), mounts,
#: kernel keyrings, BPF, perf and module loading.
_DOCKER_ALSO_DENIED = ("unshare", "setns", "mount", "umount2", "pivot_root", "keyctl", "add_key", "request_key",
                       "bpf", "perf_event_open", "userfaultfd", "open_by_handle_at", "init_module", "finit_module",
                       "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "syslog",
                       "acct", "quotactl", "mount_setattr", "move_mount", "open_tree", "fsopen", "fsmount",
                       "fsconfig", "fspick")
#: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: clone with any of them is refused.
_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)


def docker_profile() -> str:
    """A Docker seccomp profile (JSON) with the rules above: everything else allowed, as root-less as the default."""
    arch_map = {"x86_64": ["SCMP_ARCH_X86_64"], "aarch64": ["SCMP_ARCH_AARCH64"]}
    profile = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": arch_map.get(platform.machine(), []),
        "syscalls": [
            {"names": list(DENIED) + list(_DOCKER_ALSO_DENIED), "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM},
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS},
            *({"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM,
               "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]}
              for flag in _NAMESPACE_FLAGS),
        ],
    }
    return json.dumps(profile, sort_keys=True)
