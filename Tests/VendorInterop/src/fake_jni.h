/* The fake JavaVM/JNIEnv (fake_jni.c). */
#ifndef VENDOR_INTEROP_FAKE_JNI_H
#define VENDOR_INTEROP_FAKE_JNI_H
#include <stddef.h>

#define JNI_MAX_ARGS 20
typedef union { unsigned char z; int i; long long j; double d; void *l; } jvalue_t;

enum jo_kind { JO_CLASS, JO_STRING, JO_BYTES, JO_BOOLEANS, JO_INTS, JO_LONGS, JO_DOUBLES, JO_OBJECTS, JO_OBJECT };
typedef struct jo {
    enum jo_kind kind;
    int len;        /* elements of an array, bytes of a string */
    void *data;
    char *name;     /* class name; a context object's label */
    int nargs;      /* constructor arguments of an object made with NewObject */
    jvalue_t args[JNI_MAX_ARGS];
    char argtypes[JNI_MAX_ARGS + 1];
} jo;

typedef struct { char cls[96]; char name[64]; char sig[160]; } jmethod;

extern void *fakejni_env; /* JNIEnv * */
extern void *fakejni_vm;  /* JavaVM * */
void fakejni_init(void);

/* Implemented by the harness: a static or instance Java method the library calls.
 * types holds one JNI type letter per argument ('[' for any array, 'L' for objects). */
jvalue_t fakejni_callback(const jmethod *m, const jvalue_t *args, const char *types, int n);

jo *jo_new(enum jo_kind kind, int len, size_t elem);
jo *jo_bytes(const void *p, int n);
jo *jo_string(const char *s);
jo *jo_doubles(const double *p, int n);
jo *jo_ints(const int *p, int n);
jo *jo_context(const char *name);
#endif
