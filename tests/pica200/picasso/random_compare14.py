# Random picasso programs covering the fidelity classes of issue 14 (one to
# three sources sharing a DVLP, every `.gsh` mode and operand form, shared and
# hidden uniforms, `.out` by alias, float expressions, mova a0/a1/a01,
# sgei/slti/madi, single-flag conditions, more than 64 EMITs, `.nodvle`; 5% of
# the programs get invalid lines: one-operand mova, relative r, v15, a
# register after a plain uniform name, code outside .proc) through picasso and
# gpurc. Each must give an identical .shbin or be rejected by both (at which
# line is counted); for accepted ones gpurc's disassembly of picasso's file
# must reassemble to it. Usage: random_compare14.py PICASSO GPURC FIRST COUNT
import collections, os, random, subprocess, sys, tempfile

SW = 'xyzw'


def swz(r):
    if r.random() < 0.45:
        return ''
    return '.' + ''.join(r.choice('xyzwrgbastpq') for _ in range(r.randint(1, 4)))


def mask(r):
    if r.random() < 0.45:
        return ''
    comps = [c for c in SW if r.random() < 0.5] or ['y']
    return '.' + ''.join(comps)


class Src:
    def __init__(self, r, geo, bad):
        self.r, self.geo, self.bad = r, geo, bad
        self.outs = []

    def reg(self, kinds):
        r = self.r
        k = r.choice(kinds)
        if k == 'v' and r.random() < 0.7:
            k = 'r'
        neg = '-' if r.random() < 0.2 else ''
        if k == 'v':
            s = 'v%d' % r.randint(0, 14 if r.random() > self.bad else 15)
        elif k == 'r':
            s = 'r%d' % r.randint(0, 15)
            if r.random() < self.bad:
                s += '[a0.x]'  # relative indexing on r: picasso rejects
        elif k == 'c':
            s = 'c%d' % r.randint(0, 95)
        else:
            s = r.choice(['u0', 'arr[%d]' % r.randint(0, 3), 'k1', 'arr[a0.x+%d]' % r.randint(0, 3), 'arr[aL]',
                          'arr[a0.y]', 'k1[a0.x]', 'arr[a1+1]', 'arr[a2]', 'arr[lcnt]', 'big[%d]' % r.randint(0, 7)])
        return neg + s + swz(r)

    def dst(self):
        r = self.r
        c = ['r%d' % r.randint(0, 15), 'r%d' % r.randint(0, 15)] + [o for o in self.outs]
        return r.choice(c) + mask(r)

    def ins(self):
        r = self.r
        t = r.random()
        two = ['add', 'dp3', 'dp4', 'dph', 'dst', 'mul', 'sge', 'slt', 'max', 'min', 'sgei', 'slti', 'dphi', 'dsti']
        one = ['ex2', 'lg2', 'litp', 'flr', 'rcp', 'rsq', 'mov']
        if t < 0.4:
            a = self.reg(['v', 'r', 'r', 'c', 'u'])
            b = self.reg(['r', 'r', 'r', 'r', 'v'] if r.random() < 0.95 else ['c', 'u'])
            return '%s %s, %s, %s' % (r.choice(two), self.dst(), a, b)
        if t < 0.6:
            return '%s %s, %s' % (r.choice(one), self.dst(), self.reg(['v', 'r', 'c', 'u']))
        if t < 0.68:
            if r.random() < 0.5:  # mad: src3 may be wide
                return '%s %s, %s, %s, %s' % (r.choice(['mad', 'madi']), self.dst(), self.reg(['r', 'r', 'v']),
                                              self.reg(['r', 'v']), self.reg(['r', 'c', 'u']))
            return '%s %s, %s, %s, %s' % (r.choice(['mad', 'madi']), self.dst(), self.reg(['r', 'r', 'v']),
                                          self.reg(['c', 'u']), self.reg(['r', 'v']))
        if t < 0.74:
            ops = ['eq', 'ne', 'lt', 'le', 'gt', 'ge']
            return 'cmp %s, %s, %s, %s' % (self.reg(['v', 'r', 'c', 'u']), r.choice(ops), r.choice(ops),
                                           self.reg(['v', 'r']))
        if t < 0.84:
            d = r.choice(['a0', 'a0.x', 'a1', 'a0.y', 'a01', 'a0.xy'] if r.random() > self.bad else ['a0.yx', 'a0.z', 'a2'])
            if r.random() < self.bad:
                return 'mova ' + r.choice([d, self.reg(['r', 'v'])])  # one operand: picasso rejects
            return 'mova %s, %s' % (d, self.reg(['v', 'r', 'c', 'u']))
        if self.geo and t < 0.9:
            if r.random() < 0.5:
                return 'setemit %d%s' % (r.randint(0, 2), r.choice(['', ', prim', ', inv', ', prim inv', ', primitive']))
            return 'emit'
        return r.choice(['nop', 'breakc cmp.x', 'breakc !cmp.y', 'breakc cmp.x && cmp.y', 'call sub',
                         'callc cmp.y, sub', 'callc !cmp.x, sub', 'callu b1, sub', 'callu b2, sub',
                         'jmpc cmp.x || !cmp.y, lab%d' % r.randint(0, 2), 'jmpc !cmp.x, lab%d' % r.randint(0, 2),
                         'jmpu b3, lab%d' % r.randint(0, 2), 'jmpu !b0, lab%d' % r.randint(0, 2)])

    def block(self, depth, out, lab):
        r = self.r
        for _ in range(r.randint(0, 5)):
            t = r.random()
            if depth < 3 and t < 0.12:
                out.append('ifu b%d' % r.randint(0, 3) if r.random() < 0.5 else
                           'ifc ' + r.choice(['cmp.x', '!cmp.y', 'cmp.x && cmp.y', '!cmp.x || cmp.y']))
                self.block(depth + 1, out, lab)
                if r.random() < 0.5:
                    out.append('.else')
                    self.block(depth + 1, out, lab)
                out.append('.end')
            elif depth < 3 and t < 0.2:
                out.append('for i%d' % r.randint(0, 3))
                self.block(depth + 1, out, lab)
                out.append('.end')
            elif t < 0.25 and lab[0] < 3:
                out.append('lab%d:' % lab[0])
                lab[0] += 1
            else:
                out.append(self.ins())


FLOATS = ['1.0/128.0', '2.5e-1', '-0.0', '3.0*2.0', '.5', '1.', '7', '-.25', '1e30', '1e-30', '0.1', '65504.0',
          '1.0/3.0', '2x', '+4', '-1e-19']


def source(r, name, kind, bad, shared_names, shared_flags):
    """kind: 'vsh', 'gsh'."""
    out = []
    geo = kind == 'gsh'
    s = Src(r, geo, bad)
    if geo:
        m = r.random()
        n = r.randint(0, 12) * 4
        if m < 0.15:
            out.append('.gsh')
        elif m < 0.35:
            out.append('.gsh point c%d' % n)
        elif m < 0.55:
            out.append('.gsh %s c%d %d' % (r.choice(['variable', 'subdivision']), n, r.randint(0, 6)))
        else:
            start = r.randint(0, 40)
            if r.random() > bad and start >= n:
                n = start + r.randint(1, 8)
            out.append('.gsh %s c%d c%d %d' % (r.choice(['fixed', 'particle']), n, start, r.randint(0, 6)))
    for nm in shared_names:
        if r.random() < 0.6:
            out.append('.fvec %s' % nm)
    out.append('.fvec u0, arr[4]')
    if r.random() < 0.5:
        out.append('.fvec _h[%d], more' % shared_flags)
    if r.random() < 0.4:
        out.append('.fvec big[8]')
    else:
        out.append('.fvec big[8] trailing text' if r.random() < 0.3 else '.fvec big[8]')
    if r.random() < bad:
        out.append('.fvec plain c3')  # register after a plain name: picasso rejects
    out.append('.constf k1(%s, %s, %s, %s)' % tuple(r.choice(FLOATS) for _ in range(4)))
    if r.random() < 0.5:
        out.append('.constf k2(%g, %g, 1.5, -2.0)' % (r.uniform(-4, 4), r.uniform(-1e5, 1e5)))
    if r.random() < 0.4:
        out.append('.consti ci(%d, %d, %d, %d)' % tuple(r.randint(-300, 300) for _ in range(4)))
    out.append('.bool bb')
    out.append('.ivec ii')
    if r.random() < 0.5:
        out.append('.bool flags[%d]' % shared_flags)
    out.append('.in inA')
    if r.random() < 0.7:
        out.append('.in inB v%d' % r.randint(2, 9))
    # outputs
    nout = 0
    out.append('.out outp position')
    s.outs.append('outp')
    nout = 1
    types = ['color', 'texcoord0', 'texcoord1', 'texcoord2', 'normalquat', 'view', 'dummy']
    used_regs = set()
    chosen = r.sample(types, r.randint(0, 4))
    regs = [6, 5, 4, 3, 2, 1]
    partial = []  # (name, free components) of outputs declared with a partial mask
    for i, t in enumerate(chosen):
        f = r.random()
        if f < 0.3:
            out.append('.out out%d %s' % (i, t))
            s.outs.append('out%d' % i)
        elif f < 0.45:
            out.append('.out - %s' % (t + mask(r)))
        elif f < 0.75 or not partial:
            reg = regs[i] if r.random() > bad else r.randint(1, 9)
            m = r.choice(['', '.x', '.xy', '.xyz', '.xy', '.yzw']) if r.random() < 0.8 else mask(r)
            out.append('.out out%d %s o%d%s' % (i, t, reg, m))
            s.outs.append('out%d' % i)
            if m in ('.x', '.xy', '.xyz'):
                partial.append(('out%d' % i, 'xyzw'[len(m) - 1:]))
        else:
            al, free = partial.pop()
            if r.random() < 0.92:
                comps = free[:r.randint(1, len(free))]
            else:
                comps = r.choice(['x', 'xy', 'w'])  # may collide: both must reject
            sw = ''.join(r.choice({'x': 'xr', 'y': 'yg', 'z': 'zbp', 'w': 'waq'}[c]) for c in comps)
            out.append('.out - %s %s.%s' % (r.choice(['texcoord0w', 'view', 'color', 'texcoord1']), al, sw))
    if r.random() < 0.3:
        out.append('.alias tmp r%d.%s' % (r.randint(0, 15), r.choice(['x', 'yx', 'xyzw', 'wzyx'])))
        s.outs.append('tmp')
    lab = [0]
    has_main = True
    if r.random() < bad * 0.5:
        out.append('    mov r0, r1')  # outside .proc: picasso rejects
    if kind == 'lib':
        out.append('.proc sub')
        s.block(1, out, lab)
        out.append('    mov r0, r1')
        out.append('.end')
        out.append('.nodvle')
        return name, '\n'.join(out) + '\n'
    out.append('.proc sub')
    s.block(1, out, lab)
    out.append('    mov r0, r1')
    out.append('.end')
    if r.random() < 0.3:
        out.append('.entry start')
        out.append('.proc start')
    else:
        out.append('.proc main')
    s.block(1, out, lab)
    if geo and r.random() < 0.3:
        for _ in range(r.randint(60, 80)):  # more than 64 EMITs in one invocation
            out.append('    emit')
    for l in range(lab[0], 3):
        out.append('lab%d:' % l)
    out.append('    end')
    out.append('.end')
    return name, '\n'.join(out) + '\n'


def gen(seed):
    r = random.Random(seed)
    bad = 0.0 if r.random() < 0.6 else 0.05
    n = 1 if r.random() < 0.6 else r.randint(2, 3)
    shared = ['sh%d[%d]' % (i, r.randint(1, 4)) for i in range(r.randint(0, 2))]
    files = []
    flags = r.randint(1, 4)
    for i in range(n):
        if i and i == n - 1 and r.random() < 0.25:
            kind = 'lib'
        else:
            kind = 'gsh' if r.random() < 0.35 else 'vsh'
        ext = 'gsh' if kind == 'gsh' else 'vsh'
        files.append(source(r, 's%d.%s' % (i, ext), kind, bad, shared, flags))
    if n > 1:
        # procedure names must differ across sources
        fixed = []
        for i, (nm, text) in enumerate(files):
            text = text.replace('.proc sub', '.proc sub%d' % i).replace('call sub\n', 'call sub%d\n' % i)
            text = text.replace(', sub\n', ', sub%d\n' % i)
            text = text.replace('.entry start\n.proc start', '.entry start%d\n.proc start%d' % (i, i))
            text = text.replace('\n.proc main\n', '\n.entry main%d\n.proc main%d\n' % (i, i))
            fixed.append((nm, text))
        files = fixed
    return files

# Each generated program through picasso and gpurc: identical .shbin, or both
# reject (and at which line); for accepted ones gpurc's disassembly of
# picasso's file must reassemble to it.

P, G, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
st = collections.Counter()
feat = collections.Counter()
wd = tempfile.mkdtemp(prefix='cmp14-')
for seed in range(first, first + count):
    files = gen(seed)
    paths = []
    for nm, text in files:
        p = os.path.join(wd, nm)
        open(p, 'w').write(text)
        paths.append(p)
    alltext = ''.join(t for _, t in files)
    for f in ['.gsh point', '.gsh variable', '.gsh subdivision', '.gsh fixed', '.gsh particle', '.gsh\n', 'mova a1',
              'mova a01', 'sgei', 'slti', 'texcoord0w', '1.0/128.0', '.nodvle', '_h[', 'madi']:
        if f in alltext:
            feat[f.strip()] += 1
    if alltext.count('    emit') > 64:
        feat['>64 emits'] += 1
    if len(files) > 1:
        feat['multi-source'] += 1
    pr = subprocess.run([P, '-o', os.path.join(wd, 'p.shbin')] + paths, capture_output=True, text=True)
    gr = subprocess.run([G, 'asm', '--isa', 'pica200', '-o', os.path.join(wd, 'g.shbin')] + paths, capture_output=True,
                        text=True)
    if pr.returncode and gr.returncode:
        st['both reject'] += 1
        # picasso: "path:LINE: error: ..."; gpurc: "...name:LINE: ..."
        pe = ([l for l in pr.stderr.splitlines() if 'error:' in l] or [''])[0]
        try:
            pfile, pline = os.path.basename(pe.split(':')[0]), pe.split(':')[1]
        except IndexError:
            pfile, pline = '?', '?'
        if ('%s:%s:' % (pfile, pline)) in gr.stderr or (len(files) == 1 and ('line %s:' % pline) in gr.stderr):
            st['both reject, same line'] += 1
        else:
            print('LINEDIFF', seed, '| picasso:', pe[:150], '| gpurc:', gr.stderr.strip()[:200])
        continue
    if pr.returncode:
        st['only picasso rejects'] += 1
        print('ONLYP', seed, pr.stderr.strip()[:300])
        continue
    if gr.returncode:
        st['only gpurc rejects'] += 1
        print('ONLYG', seed, gr.stderr.strip()[:300])
        continue
    a = open(os.path.join(wd, 'p.shbin'), 'rb').read()
    b = open(os.path.join(wd, 'g.shbin'), 'rb').read()
    if a == b:
        st['identical'] += 1
    else:
        st['differ'] += 1
        print('DIFF', seed)
    d = subprocess.run([G, 'disasm', '--isa', 'pica200', os.path.join(wd, 'p.shbin')], capture_output=True)
    open(os.path.join(wd, 'rt.txt'), 'wb').write(d.stdout)
    g2 = subprocess.run([G, 'asm', '--isa', 'pica200', '-o', os.path.join(wd, 'rt.shbin'), os.path.join(wd, 'rt.txt')],
                        capture_output=True, text=True)
    if d.returncode == 0 and g2.returncode == 0 and open(os.path.join(wd, 'rt.shbin'), 'rb').read() == a:
        st['disasm reassembles'] += 1
    else:
        st['disasm round trip fails'] += 1
        print('RTFAIL', seed, d.stderr[:100], g2.stderr.strip()[:200])
print(dict(st))
print('features (programs containing):', dict(feat))
