# Random picasso sources through picasso and gpurc: both accept with identical
# bytes (and gpurc's disassembly of picasso's file reassembles to it), or both
# reject at the same line. Usage (in a scratch directory):
#   random_compare.py PICASSO GPURC COUNT [FIRST_SEED]
import random, sys, subprocess, os
P=sys.argv[1]; G=sys.argv[2]
sys.argv=[sys.argv[0]]+sys.argv[3:]
def sw(r):
    if r.random()<0.4: return ''
    n=r.randint(1,4); return '.'+''.join(r.choice('xyzwrgbastpq') for _ in range(n))
def mask(r):
    if r.random()<0.4: return ''
    comps=[c for c in 'xyzw' if r.random()<0.5] or ['x']
    return '.'+''.join(comps)
def src(r, kinds):
    k=r.choice(kinds)
    neg='-' if r.random()<0.2 else ''
    if k=='v': s='v%d'%r.randint(0,14)
    elif k=='r': s='r%d'%r.randint(0,15)
    elif k=='c': s='c%d'%r.randint(0,95)
    elif k=='u': s=r.choice(['u0','arr[%d]'%r.randint(0,3),'k1','arr[a0.x+%d]'%r.randint(0,3),'arr[aL]','arr[a0.y]','k1[a0.x]'])
    return neg+s+sw(r)
def dst(r): return r.choice(['r%d'%r.randint(0,15),'o%d'%r.randint(0,6),'outp','outc'])+mask(r)
def ins(r):
    t=r.random()
    two=['add','dp3','dp4','dph','dst','mul','sge','slt','max','min','sgei','slti','dphi','dsti']
    one=['ex2','lg2','litp','flr','rcp','rsq','mov']
    if t<0.45:
        op=r.choice(two)
        a=src(r,['v','r','c','u']); b=src(r,['r','r','r','v'] if r.random()<0.8 else ['c','u'])
        return '%s %s, %s, %s'%(op,dst(r),a,b)
    if t<0.7: return '%s %s, %s'%(r.choice(one),dst(r),src(r,['v','r','c','u']))
    if t<0.8:
        return 'mad %s, %s, %s, %s'%(dst(r),src(r,['r','r','v']),src(r,['r','c','u']),src(r,['r','r','c','u']))
    if t<0.87: return 'cmp %s, %s, %s, %s'%(src(r,['v','r','c','u']),r.choice(['eq','ne','lt','le','gt','ge']),r.choice(['eq','ne','lt','le','gt','ge']),src(r,['v','r']))
    if t<0.93: return 'mova %s, %s'%(r.choice(['a0','a0.x','a1','a0.y','a01','a0.xy']),src(r,['v','r','c','u']))
    return r.choice(['nop','breakc cmp.x','breakc !cmp.y && cmp.x','call sub','callc cmp.y, sub','callu b1, sub','jmpc cmp.x || cmp.y, lab%d'%r.randint(0,2)])
def block(r, depth, out, lab):
    n=r.randint(0,5)
    for _ in range(n):
        t=r.random()
        if depth<3 and t<0.12:
            out.append('ifu b%d'%r.randint(0,3) if r.random()<0.5 else 'ifc '+r.choice(['cmp.x','!cmp.y','cmp.x && cmp.y']))
            block(r,depth+1,out,lab)
            if r.random()<0.5: out.append('.else'); block(r,depth+1,out,lab)
            out.append('.end')
        elif depth<3 and t<0.2:
            out.append('for i%d'%r.randint(0,3)); block(r,depth+1,out,lab); out.append('.end')
        elif t<0.25 and lab[0]<3:
            out.append('lab%d:'%lab[0]); lab[0]+=1
        else: out.append(ins(r))
def prog(seed):
    r=random.Random(seed)
    out=[]
    if r.random()<0.2: out.append('.gsh point c%d'%r.randint(0,8))
    out.append('.fvec u0, arr[4]')
    if r.random()<0.5: out.append('.fvec _h[2], more')
    out.append('.constf k1(%g, %g, 1.5, -2.0)'%(r.uniform(-4,4),r.uniform(-1e5,1e5)))
    out.append('.bool bb')
    out.append('.ivec ii')
    out.append('.in inA'); out.append('.in inB v%d'%r.randint(2,9))
    out.append('.out outp position'); out.append('.out outc color')
    if r.random()<0.5: out.append('.out - texcoord0.xy')
    out.append('.proc sub'); lab=[0]; block(r,1,out,lab); out.append('    mov r0, r1'); out.append('.end')
    out.append('.proc main'); block(r,1,out,lab)
    for l in range(lab[0],3): out.append('lab%d:'%l)
    out.append('    end'); out.append('.end')
    return '\n'.join(out)+'\n'
stats={'IDENT':0,'DIFF':0,'BOTHREJ':0,'ONLYP':0,'ONLYG':0,'RT':0,'RTFAIL':0}
N=int(sys.argv[1])
first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
for seed in range(first, first + N):
    text=prog(seed); open("t.vsh","w").write(text)
    p=subprocess.run([P,'-o','p.shbin','t.vsh'],capture_output=True); g=subprocess.run([G,'asm','--isa','pica200','-o','g.shbin','t.vsh'],capture_output=True)
    if p.returncode and g.returncode:
        stats['BOTHREJ']+=1
        pl=p.stderr.decode().split(':')[1]
        if ('line %s:'%pl) in g.stderr.decode(): stats['SAMELINE']=stats.get('SAMELINE',0)+1
        else: print('LINEDIFF',seed,p.stderr.decode()[:120],'|',g.stderr.decode()[:160])
        continue
    if p.returncode: stats['ONLYP']+=1; print('ONLYP',seed,p.stderr.decode()[:200]); continue
    if g.returncode: stats['ONLYG']+=1; print('ONLYG',seed,g.stderr.decode()[:200]); continue
    a=open('p.shbin','rb').read(); b=open('g.shbin','rb').read()
    if a==b: stats['IDENT']+=1
    else: stats['DIFF']+=1; print('DIFF',seed)
    d=subprocess.run([G,'disasm','--isa','pica200','p.shbin'],capture_output=True)
    open('rt.txt','wb').write(d.stdout)
    g2=subprocess.run([G,'asm','--isa','pica200','-o','rt.shbin','rt.txt'],capture_output=True)
    if g2.returncode==0 and open('rt.shbin','rb').read()==a: stats['RT']+=1
    else: stats['RTFAIL']+=1; print('RTFAIL',seed,g2.stderr.decode()[:200])
print(stats)
