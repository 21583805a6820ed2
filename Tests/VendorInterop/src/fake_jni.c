/* A fake JavaVM and JNIEnv, just enough for the vendor library's JNI entry points and
 * the callbacks JNI_OnLoad looks up in com/ugrokit/api/Jni. Written from the public JNI
 * specification's function-table order; no Java runtime is involved.
 *
 * Objects are jo structs (classes, strings, primitive and object arrays, opaque context
 * objects). Static method calls on com/ugrokit/api/Jni are the library's callbacks: they
 * are decoded by their signature and handed to the harness (fakejni_callback). Nothing
 * is ever freed: a harness run is short. Every unimplemented slot aborts with its index. */
#define _GNU_SOURCE
#include "fake_jni.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void trap(int index) {
    fprintf(stderr, "vendorhost: the vendor library called JNIEnv function #%d, which the fake JNI does not implement\n", index);
    abort();
}
#define T(n) static void trap_##n(void) { trap(n); }
#define T10(x) T(x##0) T(x##1) T(x##2) T(x##3) T(x##4) T(x##5) T(x##6) T(x##7) T(x##8) T(x##9)
T10() T10(1) T10(2) T10(3) T10(4) T10(5) T10(6) T10(7) T10(8) T10(9) T10(10) T10(11)
T10(12) T10(13) T10(14) T10(15) T10(16) T10(17) T10(18) T10(19) T10(20) T10(21) T10(22) T10(23)
#define E(n) (void *)trap_##n,
#define E10(x) E(x##0) E(x##1) E(x##2) E(x##3) E(x##4) E(x##5) E(x##6) E(x##7) E(x##8) E(x##9)
static void *table[240] = {E10() E10(1) E10(2) E10(3) E10(4) E10(5) E10(6) E10(7) E10(8) E10(9)
                           E10(10) E10(11) E10(12) E10(13) E10(14) E10(15) E10(16) E10(17)
                           E10(18) E10(19) E10(20) E10(21) E10(22) E10(23)};

static void **env_functions = table; /* a JNIEnv is a pointer to the function table */
static void *vm_table[8];
static void **vm_functions = vm_table;
void *fakejni_env = &env_functions;
void *fakejni_vm = &vm_functions;

jo *jo_new(enum jo_kind kind, int len, size_t elem) {
    jo *o = calloc(1, sizeof *o);
    o->kind = kind;
    o->len = len;
    if (elem) o->data = calloc((size_t)(len > 0 ? len : 1), elem);
    return o;
}
jo *jo_bytes(const void *p, int n) {
    jo *o = jo_new(JO_BYTES, n, 1);
    if (p && n) memcpy(o->data, p, (size_t)n);
    return o;
}
jo *jo_string(const char *s) {
    jo *o = jo_new(JO_STRING, (int)strlen(s), 0);
    o->data = strdup(s);
    return o;
}
jo *jo_doubles(const double *p, int n) {
    jo *o = jo_new(JO_DOUBLES, n, sizeof(double));
    if (p && n) memcpy(o->data, p, sizeof(double) * (size_t)n);
    return o;
}
jo *jo_ints(const int *p, int n) {
    jo *o = jo_new(JO_INTS, n, sizeof(int));
    if (p && n) memcpy(o->data, p, sizeof(int) * (size_t)n);
    return o;
}
jo *jo_context(const char *name) {
    jo *o = jo_new(JO_OBJECT, 0, 0);
    o->name = strdup(name);
    return o;
}

static size_t elem_size(enum jo_kind k) {
    switch (k) {
    case JO_BYTES: case JO_BOOLEANS: return 1;
    case JO_INTS: return 4;
    case JO_LONGS: case JO_DOUBLES: return 8;
    case JO_OBJECTS: return sizeof(void *);
    default: return 0;
    }
}

/* ---- implemented functions ---- */
static int GetVersion(void *env) { (void)env; return 0x00010006; }
static jo *FindClass(void *env, const char *name) {
    (void)env;
    jo *c = jo_new(JO_CLASS, 0, 0);
    c->name = strdup(name);
    return c;
}
static jo *ExceptionOccurred(void *env) { (void)env; return NULL; }
static void ExceptionNothing(void *env) { (void)env; }
static int ExceptionCheck(void *env) { (void)env; return 0; }
static void *NewRef(void *env, void *o) { (void)env; return o; }
static void DeleteRef(void *env, void *o) { (void)env; (void)o; }
static int IsSameObject(void *env, void *a, void *b) { (void)env; return a == b; }
static int EnsureLocalCapacity(void *env, int n) { (void)env; (void)n; return 0; }
static int PushLocalFrame(void *env, int n) { (void)env; (void)n; return 0; }
static void *PopLocalFrame(void *env, void *r) { (void)env; return r; }
static jo *GetObjectClass(void *env, jo *o) { (void)env; (void)o; return FindClass(env, "java/lang/Object"); }

static jmethod *GetMethodID(void *env, jo *cls, const char *name, const char *sig) {
    (void)env;
    jmethod *m = calloc(1, sizeof *m);
    snprintf(m->cls, sizeof m->cls, "%s", cls && cls->name ? cls->name : "?");
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->sig, sizeof m->sig, "%s", sig);
    return m;
}

/* Reads the arguments of a call with signature sig from a va_list. */
static int read_args(const char *sig, va_list ap, jvalue_t *out, char *types) {
    int n = 0;
    const char *p = sig + 1;
    while (*p && *p != ')' && n < JNI_MAX_ARGS) {
        char t = *p;
        if (t == '[') {
            while (*p == '[') p++;
            if (*p == 'L') p = strchr(p, ';');
            p++;
            out[n].l = va_arg(ap, void *);
            types[n++] = '[';
            continue;
        }
        if (t == 'L') {
            p = strchr(p, ';') + 1;
            out[n].l = va_arg(ap, void *);
            types[n++] = 'L';
            continue;
        }
        p++;
        switch (t) {
        case 'Z': case 'B': case 'C': case 'S': case 'I': out[n].i = va_arg(ap, int); break;
        case 'J': out[n].j = va_arg(ap, long long); break;
        case 'F': case 'D': out[n].d = va_arg(ap, double); break;
        default: break;
        }
        types[n++] = t;
    }
    types[n] = 0;
    return n;
}
static int read_args_a(const char *sig, const jvalue_t *in, jvalue_t *out, char *types) {
    int n = 0;
    const char *p = sig + 1;
    while (*p && *p != ')' && n < JNI_MAX_ARGS) {
        char t = *p;
        if (t == '[') { while (*p == '[') p++; if (*p == 'L') p = strchr(p, ';'); p++; }
        else if (t == 'L') p = strchr(p, ';') + 1;
        else p++;
        out[n] = in[n];
        if (t == 'Z') out[n].i = in[n].z;
        if (t == 'B') out[n].i = (signed char)in[n].z;
        if (t == 'I') out[n].i = in[n].i;
        types[n++] = t;
    }
    types[n] = 0;
    return n;
}

static jvalue_t dispatch(jmethod *m, jvalue_t *args, const char *types, int n) {
    return fakejni_callback(m, args, types, n);
}

#define CALLV(NAME, RET, FIELD)                                                          \
    static RET NAME##V(void *env, void *obj, jmethod *m, va_list ap) {                   \
        (void)env; (void)obj;                                                             \
        jvalue_t a[JNI_MAX_ARGS]; char t[JNI_MAX_ARGS + 1];                               \
        int n = read_args(m->sig, ap, a, t);                                              \
        jvalue_t r = dispatch(m, a, t, n);                                                \
        return (RET)r.FIELD;                                                              \
    }                                                                                     \
    static RET NAME(void *env, void *obj, jmethod *m, ...) {                             \
        va_list ap; va_start(ap, m); RET r = NAME##V(env, obj, m, ap); va_end(ap);        \
        return r;                                                                         \
    }                                                                                     \
    static RET NAME##A(void *env, void *obj, jmethod *m, const jvalue_t *in) {           \
        (void)env; (void)obj;                                                             \
        jvalue_t a[JNI_MAX_ARGS]; char t[JNI_MAX_ARGS + 1];                               \
        int n = read_args_a(m->sig, in, a, t);                                            \
        jvalue_t r = dispatch(m, a, t, n);                                                \
        return (RET)r.FIELD;                                                              \
    }
CALLV(CallObject, void *, l)
CALLV(CallBoolean, unsigned char, i)
CALLV(CallInt, int, i)
CALLV(CallLong, long long, j)
CALLV(CallDouble, double, d)
static void CallVoidV(void *env, void *obj, jmethod *m, va_list ap) { (void)CallIntV(env, obj, m, ap); }
static void CallVoid(void *env, void *obj, jmethod *m, ...) {
    va_list ap; va_start(ap, m); CallVoidV(env, obj, m, ap); va_end(ap);
}
static void CallVoidA(void *env, void *obj, jmethod *m, const jvalue_t *in) { (void)CallIntA(env, obj, m, in); }

static jo *NewObjectV(void *env, jo *cls, jmethod *m, va_list ap) {
    (void)env;
    jo *o = jo_new(JO_OBJECT, 0, 0);
    o->name = strdup(cls && cls->name ? cls->name : "?");
    o->nargs = read_args(m->sig, ap, o->args, o->argtypes);
    return o;
}
static jo *NewObject(void *env, jo *cls, jmethod *m, ...) {
    va_list ap; va_start(ap, m); jo *o = NewObjectV(env, cls, m, ap); va_end(ap); return o;
}
static jo *NewObjectA(void *env, jo *cls, jmethod *m, const jvalue_t *in) {
    (void)env;
    jo *o = jo_new(JO_OBJECT, 0, 0);
    o->name = strdup(cls && cls->name ? cls->name : "?");
    o->nargs = read_args_a(m->sig, in, o->args, o->argtypes);
    return o;
}

static jo *NewStringUTF(void *env, const char *s) { (void)env; return s ? jo_string(s) : NULL; }
static int GetStringUTFLength(void *env, jo *s) { (void)env; return s ? s->len : 0; }
static const char *GetStringUTFChars(void *env, jo *s, unsigned char *copy) {
    (void)env; if (copy) *copy = 0; return s ? (const char *)s->data : "";
}
static void ReleaseStringUTFChars(void *env, jo *s, const char *c) { (void)env; (void)s; (void)c; }
static int GetArrayLength(void *env, jo *a) { (void)env; return a ? a->len : 0; }
static jo *NewObjectArray(void *env, int n, jo *cls, jo *init) {
    (void)env; (void)cls;
    jo *a = jo_new(JO_OBJECTS, n, sizeof(void *));
    for (int i = 0; i < n; i++) ((jo **)a->data)[i] = init;
    return a;
}
static jo *GetObjectArrayElement(void *env, jo *a, int i) { (void)env; return ((jo **)a->data)[i]; }
static void SetObjectArrayElement(void *env, jo *a, int i, jo *v) { (void)env; ((jo **)a->data)[i] = v; }
#define NEWARR(NAME, KIND) static jo *NAME(void *env, int n) { (void)env; return jo_new(KIND, n, elem_size(KIND)); }
NEWARR(NewBooleanArray, JO_BOOLEANS)
NEWARR(NewByteArray, JO_BYTES)
NEWARR(NewIntArray, JO_INTS)
NEWARR(NewLongArray, JO_LONGS)
NEWARR(NewDoubleArray, JO_DOUBLES)
static void *GetArrayElements(void *env, jo *a, unsigned char *copy) {
    (void)env; if (copy) *copy = 0; return a ? a->data : NULL;
}
static void ReleaseArrayElements(void *env, jo *a, void *p, int mode) { (void)env; (void)a; (void)p; (void)mode; }
static void GetArrayRegion(void *env, jo *a, int start, int n, void *buf) {
    (void)env; size_t e = elem_size(a->kind);
    memcpy(buf, (char *)a->data + (size_t)start * e, (size_t)n * e);
}
static void SetArrayRegion(void *env, jo *a, int start, int n, const void *buf) {
    (void)env; size_t e = elem_size(a->kind);
    memcpy((char *)a->data + (size_t)start * e, buf, (size_t)n * e);
}
static void *GetPrimitiveArrayCritical(void *env, jo *a, unsigned char *copy) { return GetArrayElements(env, a, copy); }
static void ReleasePrimitiveArrayCritical(void *env, jo *a, void *p, int mode) { (void)env; (void)a; (void)p; (void)mode; }
static int GetJavaVM(void *env, void **vm) { (void)env; *vm = fakejni_vm; return 0; }
static int MonitorNothing(void *env, void *o) { (void)env; (void)o; return 0; }
static int GetObjectRefType(void *env, void *o) { (void)env; (void)o; return 1; }

/* JavaVM */
static int vm_DestroyJavaVM(void *vm) { (void)vm; return 0; }
static int vm_AttachCurrentThread(void *vm, void **penv, void *args) { (void)vm; (void)args; *penv = fakejni_env; return 0; }
static int vm_DetachCurrentThread(void *vm) { (void)vm; return 0; }
static int vm_GetEnv(void *vm, void **penv, int version) { (void)vm; (void)version; *penv = fakejni_env; return 0; }

void fakejni_init(void) {
    void **t = table;
    t[4] = GetVersion; t[6] = FindClass;
    t[15] = ExceptionOccurred; t[16] = ExceptionNothing; t[17] = ExceptionNothing;
    t[19] = PushLocalFrame; t[20] = PopLocalFrame;
    t[21] = NewRef; t[22] = DeleteRef; t[23] = DeleteRef; t[24] = IsSameObject; t[25] = NewRef;
    t[26] = EnsureLocalCapacity;
    t[28] = NewObject; t[29] = NewObjectV; t[30] = NewObjectA; t[31] = GetObjectClass;
    t[33] = GetMethodID;
    t[34] = CallObject; t[35] = CallObjectV; t[36] = CallObjectA;
    t[37] = CallBoolean; t[38] = CallBooleanV; t[39] = CallBooleanA;
    t[49] = CallInt; t[50] = CallIntV; t[51] = CallIntA;
    t[52] = CallLong; t[53] = CallLongV; t[54] = CallLongA;
    t[58] = CallDouble; t[59] = CallDoubleV; t[60] = CallDoubleA;
    t[61] = CallVoid; t[62] = CallVoidV; t[63] = CallVoidA;
    t[113] = GetMethodID; /* GetStaticMethodID */
    t[114] = CallObject; t[115] = CallObjectV; t[116] = CallObjectA;
    t[117] = CallBoolean; t[118] = CallBooleanV; t[119] = CallBooleanA;
    t[129] = CallInt; t[130] = CallIntV; t[131] = CallIntA;
    t[132] = CallLong; t[133] = CallLongV; t[134] = CallLongA;
    t[138] = CallDouble; t[139] = CallDoubleV; t[140] = CallDoubleA;
    t[141] = CallVoid; t[142] = CallVoidV; t[143] = CallVoidA;
    t[167] = NewStringUTF; t[168] = GetStringUTFLength; t[169] = GetStringUTFChars; t[170] = ReleaseStringUTFChars;
    t[171] = GetArrayLength; t[172] = NewObjectArray; t[173] = GetObjectArrayElement; t[174] = SetObjectArrayElement;
    t[175] = NewBooleanArray; t[176] = NewByteArray; t[179] = NewIntArray; t[180] = NewLongArray; t[182] = NewDoubleArray;
    for (int i = 183; i <= 190; i++) t[i] = GetArrayElements;
    for (int i = 191; i <= 198; i++) t[i] = ReleaseArrayElements;
    for (int i = 199; i <= 206; i++) t[i] = GetArrayRegion;
    for (int i = 207; i <= 214; i++) t[i] = SetArrayRegion;
    t[217] = MonitorNothing; t[218] = MonitorNothing; t[219] = GetJavaVM;
    t[222] = GetPrimitiveArrayCritical; t[223] = ReleasePrimitiveArrayCritical;
    t[226] = NewRef; t[227] = DeleteRef; t[228] = ExceptionCheck; t[232] = GetObjectRefType;
    vm_table[3] = vm_DestroyJavaVM; vm_table[4] = vm_AttachCurrentThread;
    vm_table[5] = vm_DetachCurrentThread; vm_table[6] = vm_GetEnv; vm_table[7] = vm_AttachCurrentThread;
}
