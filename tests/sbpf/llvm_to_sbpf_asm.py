#!/usr/bin/env python3
"""Rewrites `llvm-objdump -d --no-show-raw-insn` output for BPF objects (LLVM's C-like
syntax) into the sBPF assembler syntax `tally sbpf disasm` prints, one "PC: TEXT" line per
instruction, so tally's disassembler can be checked against LLVM's. Calls are left out
(LLVM prints raw offsets, tally prints the resolved names)."""
import re
import sys

ALU = {'+=': 'add', '-=': 'sub', '*=': 'mul', '/=': 'div', '|=': 'or', '&=': 'and',
       '<<=': 'lsh', '>>=': 'rsh', 's>>=': 'arsh', '%=': 'mod', '^=': 'xor', '=': 'mov'}
JMP = {'==': 'jeq', '!=': 'jne', '>': 'jgt', '>=': 'jge', '<': 'jlt', '<=': 'jle',
       's>': 'jsgt', 's>=': 'jsge', 's<': 'jslt', 's<=': 'jsle', '&': 'jset'}
SIZE = {'u8': 'b', 'u16': 'h', 'u32': 'w', 'u64': 'dw'}


def off(sign, n):
    return '%s0x%x' % ('-' if sign == '-' else '+', int(n))


def operand(s):
    s = s.strip()
    return 'r' + s[1:] if s[0] in 'rw' else str(int(s))


def convert(pc, t):
    m = re.fullmatch(r'([rw])(\d+) = (-?\d+) ll', t)
    if m:
        return 'lddw r%s, 0x%x' % (m[2], int(m[3]) & (2**64 - 1))
    m = re.fullmatch(r'r(\d+) = \*\((u\d+) \*\)\(r(\d+) ([+-]) (\d+)\)', t)
    if m:
        return 'ldx%s r%s, [r%s%s]' % (SIZE[m[2]], m[1], m[3], off(m[4], m[5]))
    m = re.fullmatch(r'\*\((u\d+) \*\)\(r(\d+) ([+-]) (\d+)\) = (\S+)', t)
    if m:
        src = m[5]
        kind = 'stx' if src[0] in 'rw' else 'st'
        return '%s%s [r%s%s], %s' % (kind, SIZE[m[1]], m[2], off(m[3], m[4]), operand(src))
    m = re.fullmatch(r'if ([rw])(\d+) (\S+) (\S+) goto ([+-]\d+) <.*>', t)
    if m:
        width = '32' if m[1] == 'w' else ''
        return '%s%s r%s, %s, lbb_%d' % (JMP[m[3]], width, m[2], operand(m[4]), pc + 1 + int(m[5]))
    m = re.fullmatch(r'goto ([+-]\d+) <.*>', t)
    if m:
        return 'ja lbb_%d' % (pc + 1 + int(m[1]))
    m = re.fullmatch(r'([rw])(\d+) = -\1\2', t)
    if m:
        return 'neg%s r%s' % ('32' if m[1] == 'w' else '64', m[2])
    m = re.fullmatch(r'r(\d+) = (be|le)(\d+) r\1', t)
    if m:
        return '%s%s r%s' % (m[2], m[3], m[1])
    m = re.fullmatch(r'([rw])(\d+) (\S+) (\S+)', t)
    if m and m[3] in ALU:
        return '%s%s r%s, %s' % (ALU[m[3]], '32' if m[1] == 'w' else '64', m[2], operand(m[4]))
    if t == 'exit':
        return 'exit'
    return None


for line in sys.stdin:
    m = re.match(r'\s*(\d+):\t(.*)$', line.rstrip('\n'))
    if not m or m[2].startswith('call'):
        continue
    text = convert(int(m[1]), m[2].strip())
    print('%s: %s' % (m[1], text if text else 'UNKNOWN ' + m[2]))
